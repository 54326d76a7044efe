/**
 * Writ's own answer to the common 2026-07-28 `/mcp` POST: one plain `tools/call`. Through the v2
 * SDK's entry (modern.ts), every such POST builds a `Server` with all of Writ's methods
 * registered, a per-request transport, connects them, and checks the request twice more; here the
 * call goes straight to the same handler (`callToolModern`), and the answer is the one the SDK's
 * entry sends, byte for byte (test/mcp/fast-path.test.ts compares them), mirroring
 * `@modelcontextprotocol/server` 2.4.0:
 * - the handler's result as `Server._wrapHandler` reads a `tools/call`'s: an `input_required`
 *   one checked (at least one of `inputRequests` and `requestState`; each input request within
 *   the capabilities the request's envelope declares, else -32021), any other normalized (a
 *   result without `content` gains `content: []`) and validated by the revision's result schema,
 *   whose parse gives the keys' order;
 * - encoded as the revision's codec encodes it: `resultType: "complete"` stamped last when absent,
 *   the server's identity (`io.modelcontextprotocol/serverInfo`) at the end of its `_meta`;
 * - a thrown error as the SDK's `Protocol` answers one (its safe-integer `code`, -32002 sent as
 *   -32602, its message and data), with Writ's error as `data` (messages.ts);
 * - sent as `PerRequestHTTPServerTransport` sends: JSON (status 200, or 400 for -32021), or a
 *   stream of Server-Sent Events once a notification goes out before the answer (kept alive every
 *   15 s); a caller that goes away aborts the call and gets 499 with no body.
 *
 * Plain is: a JSON body, the three standard headers present and naming what the body names (the
 * revision, `tools/call`, the tool, not Base64-encoded), `params` holding only `name`,
 * `arguments` and a `_meta` that is the envelope alone (revision, client info, client
 * capabilities: no log level, progress token, approval id or trace context), no `inputResponses`
 * or `requestState`, and a client that does not declare the tasks extension. The SDK's entry
 * classified the request already (an envelope it accepts, headers agreeing with the body), and
 * refuse-param-headers ran before. Everything else is the SDK's.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  ContentBlockSchema,
  ImplementationSchema,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/core/internal";
import type { CallToolRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  type InputRequiredResult,
  isInputRequiredResult,
  isJsonContentType,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { isRecord } from "../core/json.ts";
import { roundFrom } from "./approval-flow.ts";
import { fastPathOn, onlyKeys, thrownAsError } from "./fast-path.ts";
import { SERVER_INFO } from "./initialize.ts";
import { SSE_HEADERS } from "./lazy-stream.ts";
import { errorWithData } from "./messages.ts";
import { callToolModern, type PostContext } from "./methods/index.ts";
import { declaresTasks, withoutTaskContent } from "./tasks.ts";

/** The revision answered here. */
const REVISION = "2026-07-28";
const ENVELOPE_KEYS: readonly string[] = [
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
];
/** How a header value says it is Base64 (`=?base64?…?=`): the SDK decodes such an `Mcp-Name`. */
const BASE64_SENTINEL = { prefix: "=?base64?", suffix: "?=" };
/** Keys that make a result not a plain tool result, which the SDK then leaves without `content`. */
const FOREIGN_RESULT_KEYS = ["task", "inputRequests", "requestState"];
/** As the SDK's per-request transport keeps a stream alive. */
const KEEP_ALIVE_MS = 15_000;

/**
 * The revision's `tools/call` result as its codec validates one (the SDK's frozen wire schema,
 * built from the same content blocks); its parse orders the keys as the SDK's answer has them.
 */
const RESULT_SCHEMA = z.looseObject({
  _meta: z
    .looseObject({ [SERVER_INFO_META_KEY]: ImplementationSchema.optional().catch(undefined) })
    .optional(),
  content: z.array(ContentBlockSchema),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});

/** A POST answered here. */
export interface PlainModernCall {
  id: string | number;
  /** The call as the SDK's server hands it to its handler: the envelope lifted out of `_meta`. */
  request: CallToolRequest;
  envelope: Record<string, unknown>;
}

/**
 * The plain `tools/call` of a POST the SDK's entry classified as 2026-07-28 (`call`: body.ts's
 * reading of it), or undefined when the SDK answers it (see the module's comment).
 */
export function plainModernCall(
  request: Request,
  messages: unknown,
  call: CallToolRequest | undefined,
): PlainModernCall | undefined {
  if (!fastPathOn() || call === undefined || !isRecord(messages) || messages.method !== "tools/call")
    return undefined;
  const id = messages.id;
  const params = messages.params;
  if ((typeof id !== "string" && typeof id !== "number") || !isRecord(params)) return undefined;
  const envelope = params._meta;
  if (
    !onlyKeys(params, ["name", "arguments", "_meta"]) ||
    !isRecord(envelope) ||
    !onlyKeys(envelope, ENVELOPE_KEYS)
  )
    return undefined;
  const headers = request.headers;
  const name = headers.get("mcp-name");
  if (
    !isJsonContentType(headers.get("content-type")) ||
    envelope[PROTOCOL_VERSION_META_KEY] !== REVISION ||
    headers.get("mcp-protocol-version") !== REVISION ||
    headers.get("mcp-method") !== "tools/call" ||
    name === null ||
    name !== params.name ||
    (name.startsWith(BASE64_SENTINEL.prefix) && name.endsWith(BASE64_SENTINEL.suffix)) ||
    declaresTasks(envelope)
  )
    return undefined;
  const { _meta: _envelope, ...lifted } = call.params;
  return { id, request: { ...call, params: lifted }, envelope };
}

/** The answer to a plain call (see the module's comment). */
export function answerModernCall(
  post: PostContext,
  request: Request,
  plain: PlainModernCall,
): Promise<Response> {
  const { id, envelope } = plain;
  const exchange = new Exchange(request.signal);
  if (exchange.closed) return exchange.response;
  const run = async (): Promise<Record<string, unknown>> => {
    let result: Awaited<ReturnType<typeof callToolModern>>;
    try {
      result = await callToolModern(post, plain.request, {
        id,
        round: roundFrom(undefined, undefined, envelope),
        signal: exchange.signal,
        notify: (notification) => exchange.send({ jsonrpc: "2.0", ...notification }),
      });
    } catch (error) {
      if (error instanceof ProtocolError && error.code === ProtocolErrorCode.UrlElicitationRequired) {
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `URL elicitation cannot be signalled by throwing UrlElicitationRequiredError on protocol revision ${REVISION}: return inputRequired({ inputRequests: { …: inputRequired.elicitUrl(...) } }) from the handler instead. The urlElicitationRequired error (-32042) of earlier revisions is not available on this revision.`,
        );
      }
      throw error;
    }
    if (isInputRequiredResult(result)) {
      checkInputRequests(result, envelope[CLIENT_CAPABILITIES_META_KEY]);
      return result;
    }
    const normalized =
      result.content === undefined && !FOREIGN_RESULT_KEYS.some((key) => key in result)
        ? { ...result, content: [] }
        : result;
    const parsed = RESULT_SCHEMA.safeParse(normalized);
    if (!parsed.success) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid tools/call result: ${String(parsed.error)}`,
      );
    }
    return parsed.data;
  };
  run().then(
    (result) => {
      if (!exchange.signal.aborted) void exchange.send({ result: encoded(result), jsonrpc: "2.0", id });
    },
    (error: unknown) => {
      // As the v2 SDK's codec: -32002 (resource not found) is sent as -32602.
      if (!exchange.signal.aborted)
        void exchange.send(thrownAsError(id, error, (code) => (code === -32002 ? -32602 : code)));
    },
  );
  return exchange.response;
}

/** A result as the revision's codec encodes it (`enforceDeletedFields`, `stampResultType`, `stampServerInfoMeta`). */
function encoded(result: Record<string, unknown>): Record<string, unknown> {
  let next = result;
  const capabilities = next.capabilities;
  if (isRecord(capabilities) && "tasks" in capabilities) {
    const { tasks: _deleted, ...rest } = capabilities;
    next = { ...next, capabilities: rest };
  }
  if (next.resultType === undefined) next = { ...next, resultType: "complete" };
  const meta = next._meta;
  if (meta === undefined) return { ...next, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  if (!isRecord(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return next;
  return { ...next, _meta: { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO } };
}

/**
 * An `input_required` answer's checks, as the SDK's server makes them: at least one of
 * `inputRequests` and `requestState`, and each input request one the revision defines, within
 * the client capabilities the request declares (`declared`).
 */
function checkInputRequests(result: InputRequiredResult, declared: unknown): void {
  const requests = result.inputRequests;
  const asks = requests !== undefined && requests !== null && Object.keys(requests).length > 0;
  if (!asks && typeof result.requestState !== "string") {
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      "Handler for tools/call returned an input-required result with neither inputRequests nor requestState (every InputRequiredResult must include at least one of the two)",
    );
  }
  for (const [key, entry] of Object.entries(requests ?? {})) {
    const method: unknown = isRecord(entry) ? entry.method : undefined;
    const required = isRecord(entry) ? requiredCapabilities(entry) : undefined;
    if (typeof method !== "string") {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Handler for tools/call returned an invalid input request '${key}': each inputRequests entry must be an embedded elicitation/create, sampling/createMessage, or roots/list request`,
      );
    }
    if (required === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Handler for tools/call returned an input request '${key}' of kind '${method}', which is not an embedded request the 2026-07-28 revision defines`,
      );
    }
    const missing = missingCapabilities(required, declared);
    if (missing !== undefined) {
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: missing },
        `Cannot request input '${key}' (${method}): the request's client capabilities do not declare the required capability`,
      );
    }
  }
}

/** The client capabilities an input request needs (the SDK's `requiredClientCapabilitiesForInputRequest`). */
function requiredCapabilities(
  entry: Record<string, unknown>,
): Record<string, Record<string, object>> | undefined {
  const params = isRecord(entry.params) ? entry.params : undefined;
  switch (entry.method) {
    case "elicitation/create":
      return { elicitation: params?.mode === "url" ? { url: {} } : { form: {} } };
    case "sampling/createMessage":
      return {
        sampling: params?.tools !== undefined || params?.toolChoice !== undefined ? { tools: {} } : {},
      };
    case "roots/list":
      return { roots: {} };
    default:
      return undefined;
  }
}

/**
 * What of `required` the client did not declare (the SDK's `missingClientCapabilities`): a
 * capability missing, or a member of it; a bare `elicitation: {}` declares form elicitation.
 */
function missingCapabilities(
  required: Record<string, Record<string, object>>,
  declared: unknown,
): Record<string, object> | undefined {
  const missing: Record<string, object> = {};
  for (const [capability, members] of Object.entries(required)) {
    const value = isRecord(declared) ? declared[capability] : undefined;
    if (value === undefined) {
      missing[capability] = members;
      continue;
    }
    if (!isRecord(value)) continue;
    const absent: Record<string, object> = {};
    for (const [member, requirement] of Object.entries(members)) {
      const implied =
        capability === "elicitation" &&
        member === "form" &&
        value.form === undefined &&
        value.url === undefined;
      if (value[member] === undefined && !implied) absent[member] = requirement;
    }
    if (Object.keys(absent).length > 0) missing[capability] = absent;
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}

/**
 * One exchange's answer, as the SDK's `PerRequestHTTPServerTransport` gives it: JSON, or Server-Sent
 * Events from the first notification on; every message on its way out as Writ's modern server
 * sends it (Writ's error as a JSON-RPC error's `data`, a task without `content`: initialize.ts).
 */
class Exchange {
  readonly response: Promise<Response>;
  #settle: (response: Response) => void = () => undefined;
  #settled = false;
  /** Whether the call's answer was sent (closing after it aborts nothing). */
  #answered = false;
  #closed = false;
  #stream: { controller: ReadableStreamDefaultController<Uint8Array>; open: boolean } | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  readonly #abort = new AbortController();
  readonly #encoder = new TextEncoder();
  readonly #forget: () => void;

  constructor(caller: AbortSignal) {
    this.response = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const close = () => this.close();
    caller.addEventListener("abort", close, { once: true });
    this.#forget = () => caller.removeEventListener("abort", close);
    if (caller.aborted) this.close();
  }

  /** The handler's signal: aborted once the exchange closed before its answer. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends a notification of the call, or its answer (which ends the exchange). */
  async send(message: Record<string, unknown>): Promise<void> {
    if (this.#closed) return;
    const out = withoutTaskContent(errorWithData(message));
    if (!("result" in out) && !("error" in out)) {
      this.#write(out);
      return;
    }
    this.#answered = true;
    if (this.#stream !== undefined) {
      this.#write(out);
      this.#endStream();
    } else {
      // A missing client capability is the one error a handler's answer carries with a 4xx.
      const refused =
        isRecord(out.error) && out.error.code === ProtocolErrorCode.MissingRequiredClientCapability;
      this.#settled = true;
      this.#settle(
        Response.json(out, { status: refused ? 400 : 200, headers: { "Content-Type": "application/json" } }),
      );
    }
    queueMicrotask(() => this.close());
  }

  /** Ends the exchange; before its answer, the call is aborted and the caller gets 499. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#forget();
    this.#endStream();
    if (!this.#settled) {
      this.#settled = true;
      this.#settle(new Response(null, { status: 499 }));
    }
    if (!this.#answered) this.#abort.abort(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"));
  }

  #write(message: object): void {
    if (this.#stream === undefined) this.#openStream();
    this.#frame(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  #frame(frame: string): void {
    const stream = this.#stream;
    if (stream === undefined || !stream.open) return;
    try {
      stream.controller.enqueue(this.#encoder.encode(frame));
    } catch {
      // The caller's side is gone; close() follows from the stream's cancel.
    }
  }

  #openStream(): void {
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const readable = new ReadableStream<Uint8Array>({
      start: (streamController) => {
        controller = streamController;
      },
      cancel: () => this.close(),
    });
    if (controller === undefined) throw new Error("mcp: a ReadableStream did not start synchronously");
    this.#stream = { controller, open: true };
    this.#keepAlive = setInterval(() => this.#frame(": keepalive\n\n"), KEEP_ALIVE_MS);
    this.#keepAlive.unref();
    if (this.#settled) return;
    this.#settled = true;
    this.#settle(new Response(readable, { status: 200, headers: SSE_HEADERS }));
  }

  #endStream(): void {
    clearInterval(this.#keepAlive);
    const stream = this.#stream;
    if (stream === undefined || !stream.open) return;
    stream.open = false;
    try {
      stream.controller.close();
    } catch {
      // Already closed by the caller.
    }
  }
}
