/**
 * `prompts/list`: the upstream servers' prompts whose governing contract the discovery policy
 * shows this caller, plus `_meta["writ/contract"]`. `prompts/get`: the whole pipeline
 * (proposed.ts); the messages pass as the server sent them (redacted).
 */
import {
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { resultMeta } from "../answers.ts";
import { promptMessages } from "../results.ts";
import type { ProposedMessage } from "./approved.ts";
import type { MethodRegistration, PostContext } from "./context.ts";
import { runMessage, withContract } from "./proposed.ts";

/** A `prompts/get` through the pipeline: the messages as the server sent them (redacted). */
export async function getPrompt(
  post: PostContext,
  params: {
    name: string;
    arguments?: Record<string, string> | undefined;
    _meta?: Record<string, unknown> | undefined;
  },
  jsonRpcId: string | number,
): Promise<GetPromptResult> {
  const { name, arguments: args } = params;
  const message: ProposedMessage = {
    method: "prompts/get",
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
  };
  const ran = await runMessage(post, message, params._meta, jsonRpcId);
  return { ...promptMessages(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
}

const listPrompts = ({ discovery, subject }: PostContext) => ({
  prompts: discovery.prompts(subject).map(withContract),
});

export const prompts: MethodRegistration = {
  legacy: (post) => {
    post.server.setRequestHandler(ListPromptsRequestSchema, async () => listPrompts(post));
    post.server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
      post.tracked(() => getPrompt(post, request.params, extra.requestId)),
    );
  },
  modern: (post) => {
    post.server.setRequestHandler("prompts/list", async () => listPrompts(post));
    post.server.setRequestHandler("prompts/get", (request, ctx) =>
      getPrompt(post, request.params, ctx.mcpReq.id),
    );
  },
};
