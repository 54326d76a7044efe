/**
 * `completion/complete`: suggestions for an argument of a prompt or of a resource template,
 * asked of the upstream server that owns it, only when the discovery policy shows this caller
 * the prompt's or template's governing contract (what `prompts/list` and
 * `resources/templates/list` show it); anything else is answered as an unknown prompt or
 * template is (-32602 with Writ's error), so the answer does not tell what exists. The
 * suggestions pass as the server sent them; a server that declares no completions suggests none.
 */
import { CompleteRequestSchema, type CompleteResult } from "@modelcontextprotocol/sdk/types.js";
import { WritError } from "../../core/errors.ts";
import type { MethodRegistration, PostContext } from "./context.ts";
import { refusing } from "./proposed.ts";

type CompleteParams = {
  ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> | undefined } | undefined;
};

/** The server owning what `ref` names, when this caller is shown it. */
function ownerOf({ gw, discovery, subject }: PostContext, ref: CompleteParams["ref"]): string | undefined {
  const listed =
    ref.type === "ref/prompt"
      ? discovery.prompts(subject).find(({ item }) => item.name === ref.name)
      : discovery.templates(subject).find(({ item }) => item.uriTemplate === ref.uri);
  const backend =
    listed === undefined
      ? undefined
      : gw.contracts.get(listed.contract.name, listed.contract.version)?.backend;
  return backend?.kind === "mcp_prompt" || backend?.kind === "mcp_resource" ? backend.server : undefined;
}

/** The suggestions for `params`, or a JSON-RPC error carrying Writ's error. */
export function complete(post: PostContext, params: CompleteParams): Promise<CompleteResult> {
  return refusing(async () => {
    const server = ownerOf(post, params.ref);
    const what =
      params.ref.type === "ref/prompt" ? `prompt ${params.ref.name}` : `resource template ${params.ref.uri}`;
    if (server === undefined || post.gw.mcp === undefined) {
      throw new WritError("not_found", `no ${what} is offered to you`, {
        suggestedFix:
          "complete the arguments of a prompt or resource template that prompts/list or resources/templates/list shows you",
      });
    }
    const { ref, argument, context } = params;
    const result = await post.gw.mcp.complete(server, {
      ref,
      argument,
      ...(context?.arguments === undefined ? {} : { context: { arguments: context.arguments } }),
    });
    return { completion: result.completion };
  });
}

export const completion: MethodRegistration = {
  legacy: (post) => {
    post.server.setRequestHandler(CompleteRequestSchema, (request) =>
      post.tracked(() => complete(post, request.params)),
    );
  },
  modern: (post) => {
    post.server.setRequestHandler("completion/complete", (request) => complete(post, request.params));
  },
};
