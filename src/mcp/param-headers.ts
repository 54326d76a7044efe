/**
 * `Mcp-Param-*` headers on a 2026-07-28 `tools/call` (MCP's Streamable HTTP transport, "Custom
 * Headers from Tool Parameters"): a tool whose MCP view declares `x-mcp-header: "Region"` on an
 * argument (src/contracts/mcp-headers.ts) has that argument mirrored by the client into an
 * `Mcp-Param-Region` header, so that intermediaries can route on it. Writ compares each declared
 * header with the body's argument before anything is decided, and refuses a call where they
 * disagree: HTTP 400, JSON-RPC -32020 (HeaderMismatch) with Writ's error as `error.data` and the
 * disagreeing pair as `data.mismatch` (what the SDK's own ladder sends), logged as a refused call.
 * Writ's authorization still reads the body only: the header is checked, never used.
 *
 * The rules are the specification's (and the v2 SDK's, which checks them for an `McpServer`'s
 * tools only and does not export the check): an argument absent or null expects no header (one
 * sent is ignored); a present argument expects its header, whose value may be Base64 in the
 * sentinel form `=?base64?…?=` (decoded as UTF-8; not canonical Base64 or not UTF-8 is refused);
 * an integer is compared as a number (`42.0` is 42), a boolean as `true`/`false`, a string as it is.
 */
import { isRecord } from "../core/json.ts";
import { logRefusedRequest } from "../pipeline/index.ts";
import { errorWithData, HEADER_MISMATCH, protocolError } from "./messages.ts";
import type { PostContext } from "./methods/index.ts";

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** A header's value as sent, or decoded from the Base64 sentinel; undefined when that is broken. */
function decoded(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const base64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(base64)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(base64, "base64"));
  } catch {
    return undefined;
  }
}

/** The text a client mirrors for an argument; undefined for a value no header mirrors. */
function mirrored(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return String(value);
  if (
    typeof value === "number" &&
    Number.isFinite(value) &&
    !(Number.isInteger(value) && !Number.isSafeInteger(value))
  )
    return String(value);
  return undefined;
}

interface Mismatch {
  header: string;
  message: string;
}

/** How the call's declared headers disagree with its arguments (the first), or undefined. */
function paramHeaderMismatch(post: PostContext, headers: Headers, message: unknown): Mismatch | undefined {
  if (!isRecord(message) || message.method !== "tools/call" || !isRecord(message.params)) return undefined;
  const { name, arguments: args } = message.params;
  const contract = typeof name === "string" ? post.gw.contracts.resolve(name, "mcp") : undefined;
  if (contract === undefined || !isRecord(args)) return undefined;
  for (const declared of post.gw.contracts.mcpHeadersOf(contract)) {
    const header = `Mcp-Param-${declared.header}`;
    const value = Object.hasOwn(args, declared.property) ? args[declared.property] : undefined;
    const expected = mirrored(value);
    if (expected === undefined) continue;
    const sent = headers.get(header);
    const argument = `${declared.property}=${JSON.stringify(value)}`;
    if (sent === null)
      return { header, message: `the body carries ${argument} but the ${header} header is absent` };
    const text = decoded(sent);
    if (text === undefined)
      return { header, message: `the ${header} header is not valid Base64 of UTF-8 text in =?base64?…?=` };
    const same =
      declared.type === "integer" && typeof value === "number" && DECIMAL.test(text)
        ? Number(text) === value
        : text === expected;
    if (!same)
      return {
        header,
        message: `the ${header} header says ${JSON.stringify(text)} but the body carries ${argument}`,
      };
  }
  return undefined;
}

/** Whether the call's tool is one the discovery policy shows this caller (checked only on a mismatch). */
function visibleTool(post: PostContext, message: Record<string, unknown>): boolean {
  const name = isRecord(message.params) ? message.params.name : undefined;
  return post.discovery.list(post.subject, "mcp").some((tool) => tool.name === name);
}

/**
 * The refusal of a 2026-07-28 POST whose `Mcp-Param-*` headers disagree with its `tools/call`
 * body (logged as a refused call), or undefined when they agree or the request is no such call.
 */
export async function refuseParamHeaders(
  post: PostContext,
  request: Request,
  message: unknown,
): Promise<Response | undefined> {
  const mismatch = paramHeaderMismatch(post, request.headers, message);
  if (mismatch === undefined || !isRecord(message)) return undefined;
  // A tool the caller may not see is not described to it, not even by its headers' names: the
  // call goes on and is refused as any call of a hidden tool is.
  if (!visibleTool(post, message)) return undefined;
  const said = `Bad Request: the request headers and body disagree: ${mismatch.message}`;
  await logRefusedRequest(
    post.gw,
    { format: "mcp", payload: message, requestId: post.requestId },
    protocolError(HEADER_MISMATCH, said),
  ).catch(() => undefined);
  const id = typeof message.id === "string" || typeof message.id === "number" ? message.id : null;
  const answer = errorWithData({
    jsonrpc: "2.0",
    id,
    error: {
      code: HEADER_MISMATCH,
      message: said,
      data: { mismatch: { header: mismatch.header, body: mismatch.message } },
    },
  });
  return new Response(JSON.stringify(answer), {
    status: 400,
    headers: { "content-type": "application/json" },
  });
}
