/**
 * Server-to-client requests an upstream MCP server sends while a caller's call runs
 * (`sampling/createMessage`, `elicitation/create`, `roots/list`; src/dispatch/mcp/client-requests.ts
 * hands each to the call's observer), forwarded to a 2025-11-25 caller on the call's own answer
 * stream, and the caller's answer back.
 *
 * Each is first a canonical action the policy decides (`mcp.sampling`, `mcp.elicitation`,
 * `mcp.roots`: the caller as subject; the arguments the server, the call's contract and the
 * request's params) and the decision log records (redacted as any input is); a refusal goes back
 * to the server as a JSON-RPC error. An allowed request leaves on the call's answer, which becomes
 * a stream (lazy-stream.ts), with an id Writ gives it (`writ-<uuid>`, unguessable). The endpoint
 * is stateless, so the caller answers in a POST of its own carrying the JSON-RPC response
 * (`answer`): taken only from the same subject of the same tenant, 202; any other id is refused
 * 400 with Writ's error. Pending requests are kept in this instance's memory: the answer must
 * reach the instance running the call (a deployment behind a load balancer keeps a caller's
 * POSTs on one instance while a call waits, or the server gets no answer before its timeout).
 *
 * A caller reading the call's answer as JSON (it does not accept `text/event-stream`) cannot be
 * asked: refused at once. Whether the caller declared the capability is not known on a stateless
 * POST (initialize's capabilities are not remembered), so the request is sent, and a client
 * without it answers -32601 itself, which the server gets. A 2026-07-28 caller's observer takes
 * no requests (that revision asks through `input_required`).
 */
import { randomUUID } from "node:crypto";
import { JSONRPCResponseSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { toolContractSchema } from "../contracts/schema.ts";
import { jsonDigest } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { ClientAnswer, ClientRequest, ClientRequestMethod } from "../core/handlers.ts";
import { isRecord } from "../core/json.ts";
import type { Subject } from "../core/types.ts";
import { canonicalAction } from "../normalize/index.ts";
import { allows, denial } from "../pipeline/05-decide.ts";
import { decideAndLog } from "../pipeline/index.ts";
import type { Asker, PostContext, RequestWriter } from "./methods/context.ts";

/** The action the policy decides for each request method. */
export const CLIENT_REQUEST_ACTIONS: Readonly<Record<ClientRequestMethod, string>> = {
  "sampling/createMessage": "mcp.sampling",
  "elicitation/create": "mcp.elicitation",
  "roots/list": "mcp.roots",
};

/** The built-in contract of each action: not in the registry, decided only when a server asks. */
const contractOf = (method: ClientRequestMethod) =>
  toolContractSchema.parse({
    name: CLIENT_REQUEST_ACTIONS[method],
    version: "1",
    description: `An MCP server's ${method} request to the caller of its running call`,
    side_effect: "none",
    idempotency: "none",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["server", "tool", "params"],
      properties: {
        server: { type: "string", description: "the MCP server asking" },
        tool: { type: "string", description: "the contract of the call it asks during" },
        params: { type: "object", description: `the ${method} request's params` },
      },
    },
    backend: { kind: "inprocess", handler: CLIENT_REQUEST_ACTIONS[method] },
  });

const CONTRACTS = {
  "sampling/createMessage": contractOf("sampling/createMessage"),
  "elicitation/create": contractOf("elicitation/create"),
  "roots/list": contractOf("roots/list"),
};

interface Pending {
  key: string;
  settle: (answer: ClientAnswer) => void;
}

const responsesSchema = z.union([JSONRPCResponseSchema, z.array(JSONRPCResponseSchema).min(1)]);

/**
 * Whether `message` may be a JSON-RPC response: the SDK's (strict) schemas take none with a
 * `method`, nor one without `result` or `error`. It spares every request POST the schemas'
 * failing parse (a union's issues: about 50 µs a POST).
 */
function mayBeResponse(message: unknown): boolean {
  return isRecord(message) && !("method" in message) && ("result" in message || "error" in message);
}

/** The requests forwarded to callers of this instance and not answered yet. */
export class ClientRequests {
  readonly #pending = new Map<string, Pending>();

  static #key(subject: Subject): string {
    return JSON.stringify([subject.tenant, subject.id]);
  }

  /** How a call asks its caller (`PostContext.askCaller`). */
  readonly ask: Asker = (post, write, call) => (request, signal) =>
    this.#forward(post, write, request, AbortSignal.any([signal, call]));

  async #forward(
    post: PostContext,
    write: RequestWriter,
    request: ClientRequest,
    signal: AbortSignal,
  ): Promise<ClientAnswer> {
    if (write === undefined) {
      throw new WritError(
        "not_found",
        `the caller reads ${request.contract}'s answer as JSON, so it cannot be asked`,
        {
          suggestedFix: `accept text/event-stream in the tools/call POST to be asked for ${request.method}`,
        },
      );
    }
    await decide(post, request);
    const id = `writ-${randomUUID()}`;
    return new Promise<ClientAnswer>((resolve, reject) => {
      const done = () => {
        this.#pending.delete(id);
        signal.removeEventListener("abort", aborted);
      };
      const aborted = () => {
        done();
        reject(
          new WritError("timeout", `${request.method} was withdrawn before the caller answered`, {
            suggestedFix: "call the tool again if you still need its result",
          }),
        );
      };
      if (signal.aborted) return aborted();
      signal.addEventListener("abort", aborted, { once: true });
      const settle = (answer: ClientAnswer) => {
        done();
        resolve(answer);
      };
      this.#pending.set(id, { key: ClientRequests.#key(post.subject), settle });
      write({ jsonrpc: "2.0", id, method: request.method, params: request.params });
    });
  }

  /**
   * The answer to a POST carrying JSON-RPC responses (one, or a batch of them): 202 when each
   * answers a request forwarded to this caller, else 400 with Writ's error (nothing settled).
   * Undefined when the body is not responses.
   */
  answer(subject: Subject, messages: unknown): Response | undefined {
    const answers = Array.isArray(messages)
      ? messages.length > 0 && messages.every(mayBeResponse)
      : mayBeResponse(messages);
    if (!answers) return undefined;
    const parsed = responsesSchema.safeParse(messages);
    if (!parsed.success) return undefined;
    const responses = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
    const key = ClientRequests.#key(subject);
    const pending = responses.map((response) => {
      const found = typeof response.id === "string" ? this.#pending.get(response.id) : undefined;
      return found?.key === key ? found : undefined;
    });
    const unknown = responses.find((_, index) => pending[index] === undefined);
    if (unknown !== undefined) return unknownResponse(unknown.id);
    responses.forEach((response, index) => {
      pending[index]?.settle("error" in response ? { error: response.error } : { result: response.result });
    });
    return new Response(null, { status: 202 });
  }
}

/** Decides and logs the request's action; throws the refusal when the policy does not allow it. */
async function decide(post: PostContext, request: ClientRequest): Promise<void> {
  const args = { server: request.server, tool: request.contract, params: request.params };
  const action = canonicalAction(CONTRACTS[request.method], args, jsonDigest(args));
  const refusal = await decideAndLog(
    post.gw,
    {
      subject: post.subject,
      action,
      resource: undefined,
      context: { requestId: post.requestId, source: "mcp" },
      limits: "charge",
    },
    ({ evaluation }) => {
      post.gw.metrics.decisions.inc({ decision: evaluation.decision.decision });
      return {
        value: allows(evaluation.decision)
          ? undefined
          : (evaluation.overruled?.error ?? denial(evaluation.decision)),
      };
    },
  );
  if (refusal !== undefined) throw refusal;
}

function unknownResponse(id: unknown): Response {
  const error = new WritError(
    "not_found",
    `no request ${JSON.stringify(id)} waits for this caller's answer`,
    {
      suggestedFix:
        "answer only requests Writ sent on a call's stream, with their id, while the call runs, as the same caller",
    },
  );
  const body = {
    jsonrpc: "2.0",
    id: null,
    error: { code: -32602, message: `Invalid params: ${error.message}`, data: error.toJSON() },
  };
  return new Response(JSON.stringify(body), { status: 400, headers: { "content-type": "application/json" } });
}
