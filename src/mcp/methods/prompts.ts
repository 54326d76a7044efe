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
import {
  type InputRequiredResult,
  isInputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { resultMeta } from "../answers.ts";
import { messageRound, roundOf } from "../approval-flow.ts";
import { promptMessages } from "../results.ts";
import type { ProposedMessage } from "./approved.ts";
import type { MethodRegistration, PostContext } from "./context.ts";
import { type Ran, runMessage, withContract } from "./proposed.ts";

/** A `prompts/get` through the pipeline: the messages as the server sent them (redacted). */
export async function getPrompt(
  post: PostContext,
  params: PromptParams,
  jsonRpcId: string | number,
): Promise<GetPromptResult> {
  const ran = await runMessage(post, promptMessage(params), params._meta, jsonRpcId);
  return promptAnswer(ran);
}

type PromptParams = {
  name: string;
  arguments?: Record<string, string> | undefined;
  _meta?: Record<string, unknown> | undefined;
};

function promptMessage({ name, arguments: args }: PromptParams): ProposedMessage {
  return { method: "prompts/get", params: { name, ...(args === undefined ? {} : { arguments: args }) } };
}

function promptAnswer(ran: Ran): GetPromptResult {
  return { ...promptMessages(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
}

/** A 2026-07-28 `prompts/get`: as `getPrompt`, or a round of the approval flow. */
async function getPromptModern(
  post: PostContext,
  params: PromptParams,
  ctx: ServerContext,
): Promise<GetPromptResult | InputRequiredResult> {
  const call = { ...post, observer: {} };
  const ran = await messageRound(call, promptMessage(params), params._meta, ctx.mcpReq.id, roundOf(ctx));
  return isInputRequiredResult(ran) ? ran : promptAnswer(ran);
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
      getPromptModern(post, request.params, ctx),
    );
  },
};
