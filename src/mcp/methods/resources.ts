/**
 * `resources/list`, `resources/templates/list`: the upstream servers' resources and templates
 * whose governing contract the discovery policy shows this caller, as the servers described them,
 * plus `_meta["writ/contract"]`. `resources/read`: the whole pipeline (proposed.ts); the contents
 * pass as the server sent them (redacted). `resources/subscribe` is not offered (Method not
 * found): the endpoint keeps no session to notify.
 */
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type InputRequiredResult,
  isInputRequiredResult,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { resultMeta } from "../answers.ts";
import { messageRound, roundOf } from "../approval-flow.ts";
import { resourceContents } from "../results.ts";
import type { ProposedMessage } from "./approved.ts";
import type { MethodRegistration, PostContext } from "./context.ts";
import { type Ran, runMessage, withContract } from "./proposed.ts";

/** A `resources/read` through the pipeline: the contents as the server sent them (redacted). */
export async function readResource(
  post: PostContext,
  params: { uri: string; _meta?: Record<string, unknown> | undefined },
  jsonRpcId: string | number,
): Promise<ReadResourceResult> {
  const ran = await runMessage(post, readMessage(params.uri), params._meta, jsonRpcId);
  return readAnswer(ran);
}

function readMessage(uri: string): ProposedMessage {
  return { method: "resources/read", params: { uri } };
}

function readAnswer(ran: Ran): ReadResourceResult {
  return { contents: resourceContents(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
}

/** A 2026-07-28 `resources/read`: as `readResource`, or a round of the approval flow. */
async function readResourceModern(
  post: PostContext,
  params: { uri: string; _meta?: Record<string, unknown> | undefined },
  ctx: ServerContext,
): Promise<ReadResourceResult | InputRequiredResult> {
  const call = { ...post, observer: {} };
  const ran = await messageRound(call, readMessage(params.uri), params._meta, ctx.mcpReq.id, roundOf(ctx));
  return isInputRequiredResult(ran) ? ran : readAnswer(ran);
}

const listResources = ({ discovery, subject }: PostContext) => ({
  resources: discovery.resources(subject).map(withContract),
});
const listTemplates = ({ discovery, subject }: PostContext) => ({
  resourceTemplates: discovery.templates(subject).map(withContract),
});

export const resources: MethodRegistration = {
  legacy: (post) => {
    const { server } = post;
    server.setRequestHandler(ListResourcesRequestSchema, async () => listResources(post));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => listTemplates(post));
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
      post.tracked(() => readResource(post, request.params, extra.requestId)),
    );
  },
  modern: (post) => {
    const { server } = post;
    server.setRequestHandler("resources/list", async () => listResources(post));
    server.setRequestHandler("resources/templates/list", async () => listTemplates(post));
    server.setRequestHandler("resources/read", (request, ctx) =>
      readResourceModern(post, request.params, ctx),
    );
  },
};
