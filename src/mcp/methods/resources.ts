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
import { resultMeta } from "../answers.ts";
import { resourceContents } from "../results.ts";
import type { ProposedMessage } from "./approved.ts";
import type { MethodRegistration } from "./context.ts";
import { runMessage, withContract } from "./proposed.ts";

export const resources: MethodRegistration = (post) => {
  const { server, discovery, subject } = post;
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: discovery.resources(subject).map(withContract),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: discovery.templates(subject).map(withContract),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    post.tracked(async (): Promise<ReadResourceResult> => {
      const message: ProposedMessage = { method: "resources/read", params: { uri: request.params.uri } };
      const ran = await runMessage(post, message, request.params._meta, extra.requestId);
      return { contents: resourceContents(ran.result), _meta: resultMeta(ran.result, ran.decisionId) };
    }),
  );
};
