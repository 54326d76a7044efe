/**
 * Step-up authorization on `/mcp` (the MCP authorization spec's scope challenge, RFC 6750
 * section 3.1): a call the policy refused for want of OAuth scopes (its error carries
 * `required_scopes`: the decision's, when the caller's token lacks one of them and may see the
 * tool; discovery's `scopeChallenge`) is answered on both revisions with a JSON-RPC error whose
 * data is Writ's error (with the decision), and the POST with HTTP 403 and
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope the call needs>",
 * resource_metadata="…"`, so a client can get a token with those scopes and send it again. The
 * handler notes the challenge on the POST (`PostContext.challenge`) and throws; the endpoint
 * turns the POST's JSON answer into the 403 (`challenged`). An answer that is a stream already
 * (its 200 has left) carries the JSON-RPC error only.
 */
import { ProtocolError } from "@modelcontextprotocol/server";
import type { CallOutcome } from "../core/gateway.ts";
import { decisionOf } from "./answers.ts";
import type { PostContext } from "./methods/context.ts";
import { mcpChallenge } from "./resource-metadata.ts";

/** The JSON-RPC code of the refusal: a server error, as the other refusals by policy (-32000). */
const INSUFFICIENT_SCOPE_CODE = -32000;

/**
 * Throws the step-up refusal when the policy refused `outcome` for want of scopes, noting the
 * challenge on the POST; returns otherwise.
 */
export function refuseForScopes(post: Pick<PostContext, "challenge">, outcome: CallOutcome): void {
  const error = outcome.error;
  if (error?.required_scopes === undefined) return;
  post.challenge.scopes = error.required_scopes;
  post.challenge.description = error.message;
  throw new ProtocolError(INSUFFICIENT_SCOPE_CODE, `${error.category}: ${error.message}`, {
    error,
    ...decisionOf(outcome),
  });
}

/** The POST's answer: as it is, or the 403 with the `insufficient_scope` challenge. */
export function challenged(post: PostContext, response: Response): Response {
  const { scopes, description } = post.challenge;
  const json = response.headers.get("content-type")?.includes("application/json") === true;
  if (scopes === undefined || !json || response.status !== 200) return response;
  const headers = new Headers(response.headers);
  const refusal = {
    code: "insufficient_scope" as const,
    description: description ?? "the token lacks a scope this call needs",
    scopes,
  };
  headers.set("www-authenticate", mcpChallenge(post.requestUrl, post.gw.identity.protectedResource, refusal));
  return new Response(response.body, { status: 403, headers });
}
