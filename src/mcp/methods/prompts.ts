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
import type { MethodRegistration } from "./context.ts";
import { runMessage, withContract } from "./proposed.ts";

export const prompts: MethodRegistration = (post) => {
  const { server, discovery, subject } = post;
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: discovery.prompts(subject).map(withContract),
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request, extra) =>
    post.tracked(async (): Promise<GetPromptResult> => {
      const { name, arguments: args } = request.params;
      const message: ProposedMessage = {
        method: "prompts/get",
        params: { name, ...(args === undefined ? {} : { arguments: args }) },
      };
      const ran = await runMessage(post, message, request.params._meta, extra.requestId);
      return { ...promptMessages(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
    }),
  );
};
