/**
 * The fuzz harness's engine (issue 15): generated and mutated inputs for three surfaces of a real
 * Writ gateway (started with `startTestGateway`: default configuration, temp SQLite, a real JWKS
 * issuer), and the properties every answer must have.
 *
 * - `http`: POST /v1/proposals in every intake format (near-valid payloads mutated: fields dropped,
 *   duplicated, retyped, huge strings, deep nesting, unicode, `__proto__`, repeated keys in the raw
 *   JSON text, wrong content types, truncated bodies), POST /v1/execute with mutated grants,
 *   GET /v1/decisions with odd query strings, PUT /v1/resources.
 * - `mcp`: JSON-RPC messages on /mcp (initialize, tools/list, tools/call, notifications, batches,
 *   valid and mutated, with odd headers and methods).
 * - `token`: mutated bearer JWTs (bit flips in each segment, alg swaps, `crit`, `kid` tricks,
 *   huge and non-base64url tokens), given to `IdentityVerifier.verify` directly and over HTTP.
 *
 * Properties, for every input: an answer comes within the per-request timeout; the process does
 * not crash; the status is 2xx or 4xx; every error body is a structured WritError (on /mcp: a
 * JSON-RPC error whose `data` is a WritError); a mutated token is never accepted unless it decodes
 * to the very bytes of the valid one; a grant whose workspace changed after its decision is never
 * honoured (and is `stale_revision` when presented with its own call); an unknown tool's
 * suggestions never name a tool discovery hides (the gateway has one, `HIDDEN_TOOL`). After a
 * run, the decision log's chain verifies (the function `writ logs verify` uses:
 * `DecisionLog.verify`), and every byte-level edit of random stored entries is caught by it
 * (`fuzz-tamper.ts`).
 *
 * Input `i` of a run is generated from its own seed (`seedOf(seed, surface, i)`), so one failure is
 * reproduced alone with `--seed <seed> --surface <surface> --only <i>`.
 */
import fc from "fast-check";
import { SignJWT } from "jose";
import { z } from "zod";
import { WritError, writErrorSchema } from "../../src/core/errors.ts";
import { type TamperReport, tamperCheck } from "./fuzz-tamper.ts";
import { answerOf, startTestGateway, type TestGateway } from "./gateway.ts";
import { HIDDEN_TOOL, HIDDEN_TOOL_NAMES } from "./hidden-tool.ts";

export const surfaces = ["http", "mcp", "token"] as const;
export type Surface = (typeof surfaces)[number];

/** One generated input: an HTTP request, or a direct call of the token verifier. */
export type FuzzCase =
  | {
      kind: "http";
      label: string;
      method: string;
      route: string;
      headers: Record<string, string>;
      body?: string;
      /** /mcp answers are JSON-RPC. */
      mcp?: boolean;
      /** When set, the request carries a mutated token: acceptance is checked against `validToken`. */
      token?: string;
    }
  | { kind: "verify"; label: string; authorization: string | undefined; token?: string }
  | {
      kind: "stale";
      label: string;
      /** A workspace of its own: alice's, a grant read from it, then changed, then the grant used. */
      workspace: string;
      change: "owner" | "attributes";
      /** Mutations of the call the stale grant is presented with (none: the very call it is for). */
      ops: Op[];
    };

export interface FuzzFailure {
  surface: Surface;
  index: number;
  seed: number;
  label: string;
  problem: string;
  input: string;
}

export interface FuzzReport {
  /** surface → label → status (or "accepted"/"refused" for direct verifier calls) → count. */
  counts: Record<string, Record<string, Record<string, number>>>;
  failures: FuzzFailure[];
  inputs: number;
  elapsedMs: number;
  chain: { ok: boolean; entries: number; detail?: string };
  /** The five slowest inputs. */
  slowest: { ms: number; surface: Surface; index: number; input: string }[];
  /** Byte-level edits of stored entries, each to be caught by verify (unless turned off). */
  tamper?: TamperReport;
}

export interface FuzzOptions {
  runs: number;
  seed: number;
  surfaces?: readonly Surface[];
  /** Run only input `only` of each surface (reproduction). */
  only?: number;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Per-request timeout in ms (default 15 000): a slower answer is a hang. */
  timeoutMs?: number;
  /** Stored entries the tamper check edits after the run (default 1000; 0: none). */
  tamperEntries?: number;
  /** Called every `progressEvery` inputs. */
  progress?: (done: number, total: number) => void;
}

/** The seed of input `index` of `surface` in a run seeded `seed`. */
export function seedOf(seed: number, surface: Surface, index: number): number {
  const offset = surfaces.indexOf(surface) * 0x9e3779b1;
  return (Math.imul(seed ^ offset, 0x85ebca6b) + Math.imul(index + 1, 0xc2b2ae35)) | 0;
}

// ---------------------------------------------------------------- JSON mutation

type Json = fc.JsonValue;
type Path = (string | number)[];

const HUGE = 300_000;

const hugeString = fc
  .tuple(fc.constantFrom("a", "é", "𝔘", "\u0000", "\\", '"', "../"), fc.integer({ min: 1_000, max: HUGE }))
  .map(([unit, n]) => unit.repeat(Math.ceil(n / unit.length)));

const deepNesting = fc.tuple(fc.integer({ min: 50, max: 1_500 }), fc.boolean()).map(([depth, arrays]) => {
  let value: Json = "x";
  for (let i = 0; i < depth; i += 1) value = arrays ? [value] : { a: value };
  return value;
});

const oddString = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "../../etc/passwd",
    ".env",
    "ws-demo",
    "README.md",
    "\u202e",
    "\ud800",
    "%00",
    "$&$`$'",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "__proto__",
    "constructor",
    "NaN",
    "1e309",
  ),
);

const oddValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 3, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constantFrom<Json>(null, true, false, 0, -1, 2 ** 53, 1e308, -0, [], {}) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNesting },
);

const oddKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "", "id", "arguments", "name", "type"),
  fc.string({ unit: "grapheme", maxLength: 12 }),
);

function pathsOf(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (out.length > 200) return out;
  if (Array.isArray(value)) for (const [i, item] of value.entries()) pathsOf(item, [...prefix, i], out);
  else if (value !== null && typeof value === "object")
    for (const key of Object.keys(value)) pathsOf(value[key] ?? null, [...prefix, key], out);
  return out;
}

function clone(value: Json): Json {
  return structuredClone(value);
}

function setOwn(target: object, key: string | number, value: Json): void {
  // defineProperty: `__proto__` becomes an own key (and is serialized), never the prototype.
  Object.defineProperty(target, String(key), { value, enumerable: true, writable: true, configurable: true });
}

type Op =
  | { op: "drop"; at: number }
  | { op: "retype"; at: number; value: Json }
  | { op: "duplicate"; at: number }
  | { op: "add"; at: number; key: string; value: Json }
  | { op: "stringify"; at: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("drop" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("retype" as const), at: fc.nat(), value: oddValue }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("add" as const), at: fc.nat(), key: oddKey, value: oddValue }),
  fc.record({ op: fc.constant("stringify" as const), at: fc.nat() }),
);

function applyOp(root: Json, op: Op): Json {
  try {
    return applyOpUnsafe(root, op);
  } catch {
    // Too deep to walk or serialize here (the nesting ops compound): leave it as it is.
    return root;
  }
}

function applyOpUnsafe(root: Json, given: Op): Json {
  // A copy of the op's value: fast-check hands every input the same instance of a constant
  // ([] or {}), which an op adding into it would otherwise change for every later input (and
  // could make circular).
  const op = "value" in given ? { ...given, value: clone(given.value) } : given;
  const all = pathsOf(root);
  const path = all[op.at % all.length] ?? [];
  if (path.length === 0) {
    if (op.op === "retype") return op.value;
    if (op.op === "stringify") return JSON.stringify(root);
    if (op.op === "add" && root !== null && typeof root === "object" && !Array.isArray(root)) {
      setOwn(root, op.key, op.value);
    }
    return root;
  }
  let parent: Json = root;
  for (const step of path.slice(0, -1)) {
    if (parent === null || typeof parent !== "object") return root;
    parent = Array.isArray(parent) ? (parent[Number(step)] ?? null) : (parent[String(step)] ?? null);
  }
  const last = path[path.length - 1] ?? "";
  if (parent === null || typeof parent !== "object") return root;
  const current: Json = Array.isArray(parent)
    ? (parent[Number(last)] ?? null)
    : (parent[String(last)] ?? null);
  switch (op.op) {
    case "drop":
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[String(last)];
      break;
    case "retype":
      setOwn(parent, last, op.value);
      break;
    case "duplicate":
      if (Array.isArray(parent)) parent.push(clone(current));
      else if (Array.isArray(current)) current.push(...structuredClone(current));
      break;
    case "add":
      if (current !== null && typeof current === "object" && !Array.isArray(current))
        setOwn(current, op.key, op.value);
      else if (Array.isArray(current)) current.push(op.value);
      break;
    case "stringify":
      setOwn(parent, last, JSON.stringify(current));
      break;
  }
  return root;
}

/** `base` (JSON) with 0 to 3 mutations. */
function mutated(base: () => Json): fc.Arbitrary<Json> {
  return fc.array(opArb, { maxLength: 3 }).map((ops) => ops.reduce(applyOp, base()));
}

type TextOp =
  | { op: "none" }
  | { op: "truncate"; at: number }
  | { op: "repeatKey"; at: number }
  | { op: "protoKey"; at: number }
  | { op: "splice"; at: number; text: string }
  | { op: "bom" }
  | { op: "nest"; depth: number; arrays: boolean };

const textOpArb: fc.Arbitrary<TextOp> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ op: "none" as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("repeatKey" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("protoKey" as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("splice" as const),
      at: fc.nat(),
      text: fc.oneof(
        fc.constantFrom("{", "}", "[", ",", ":", '"', "\\u", "\u0000", "NaN", "//", "\ufeff"),
        fc.string({ unit: "binary", maxLength: 8 }),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: "bom" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("nest" as const),
      depth: fc.integer({ min: 1_000, max: 200_000 }),
      arrays: fc.boolean(),
    }),
  },
);

/** Raw-text mutations JSON.stringify cannot make: repeated keys, truncation, stray bytes. */
function applyTextOp(text: string, op: TextOp): string {
  switch (op.op) {
    case "none":
      return text;
    case "truncate":
      return text.slice(0, op.at % Math.max(1, text.length));
    case "bom":
      return `\ufeff${text}`;
    case "nest":
      // Deeper than any serializer here would write: only the server's parser walks it.
      return op.arrays
        ? `${"[".repeat(op.depth)}${text}${"]".repeat(op.depth)}`
        : `${'{"a":'.repeat(op.depth)}${text}${"}".repeat(op.depth)}`;
    case "splice": {
      const at = op.at % (text.length + 1);
      return text.slice(0, at) + op.text + text.slice(at);
    }
    case "repeatKey":
    case "protoKey": {
      // After an object's `{`, repeat its first member, or add a `__proto__` member.
      const opens = [...text.matchAll(/\{"((?:[^"\\]|\\.)*)":/g)];
      const chosen = opens[op.at % Math.max(1, opens.length)];
      if (chosen?.index === undefined) return text;
      const at = chosen.index + 1;
      const member = op.op === "protoKey" ? '"__proto__":{"admin":true},' : `"${chosen[1]}":"repeated",`;
      return text.slice(0, at) + member + text.slice(at);
    }
  }
}

// ---------------------------------------------------------------- valid bases

const readArgs = () => ({ workspace: "ws-demo", path: "README.md" });
const searchArgs = () => ({ workspace: "ws-demo", query: "TODO" });

const formatBases: Record<string, () => Json> = {
  canonical: () => ({ calls: [{ id: "c1", tool: "repo.read", arguments: readArgs() }] }),
  "openai-chat": () => ({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "repo_read", arguments: JSON.stringify(readArgs()) },
            },
            {
              id: "call_2",
              type: "function",
              function: { name: "repo_search", arguments: JSON.stringify(searchArgs()) },
            },
          ],
        },
        finish_reason: "tool_calls",
      },
    ],
  }),
  "openai-responses": () => ({
    id: "resp_1",
    object: "response",
    output: [
      {
        type: "function_call",
        id: "fc_1",
        call_id: "call_1",
        name: "repo_read",
        arguments: JSON.stringify(readArgs()),
      },
    ],
  }),
  anthropic: () => ({
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [
      { type: "text", text: "reading" },
      { type: "tool_use", id: "toolu_1", name: "repo_search", input: searchArgs() },
    ],
    stop_reason: "tool_use",
  }),
  mcp: () => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "repo_read", arguments: readArgs() },
  }),
};
const formatNames = Object.keys(formatBases);

// ---------------------------------------------------------------- the context of a run

export interface FuzzContext {
  gw: TestGateway;
  /** developer + reviewer + admin of tenant demo. */
  token: string;
  /** A valid grant for repo.read of README.md, and the call it is for. */
  grant: string;
  /** A second valid token, for the token surface to mutate. */
  victim: string;
  /** Extra forged tokens (alg none, HS256 keyed with the public JWK, another key's EdDSA). */
  forged: string[];
  /** The gateway's SQLite file (the tamper check edits it behind Writ's back). */
  sqlitePath: string;
}

const proposeAnswer = z.object({
  results: z.array(z.object({ grant: z.object({ token: z.string() }).optional() })),
});

export async function startFuzzContext(): Promise<FuzzContext> {
  let sqlitePath = "";
  // With a tool discovery hides from every caller: no unknown tool's suggestion may name it.
  const gw = await startTestGateway({
    configure: (document) => {
      sqlitePath = z.object({ store: z.object({ sqlite: z.string() }) }).parse(document).store.sqlite;
      return { ...document, tools: [...z.array(z.unknown()).parse(document.tools), HIDDEN_TOOL] };
    },
  });
  try {
    // Valid for the whole run: a long run on a loaded machine outlasts the default 10 minutes,
    // after which every input would only reach the 401 of an expired token.
    const exp = Math.floor(Date.now() / 1000) + 24 * 3600;
    const token = await gw.token("alice", { roles: ["developer", "reviewer", "admin"], claims: { exp } });
    const victim = await gw.token("victim", { roles: ["developer"], claims: { exp } });
    const answer = await gw.propose(token, {
      format: "canonical",
      payload: formatBases.canonical?.() ?? null,
    });
    const grant = proposeAnswer.parse(answer.json).results[0]?.grant?.token;
    if (grant === undefined) throw new Error(`no grant for the base proposal: ${answer.text}`);
    const claims = {
      iss: "https://idp.e2e.test",
      aud: "writ",
      sub: "mallory",
      tnt: "demo",
      roles: ["admin"],
    };
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64({ ...claims, exp })}.`;
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: gw.issuerKey.kid })
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(JSON.stringify(gw.issuerKey.publicJwk)));
    const other = await (await import("../identity/helpers.ts")).makeKey("EdDSA", gw.issuerKey.kid);
    const foreign = await (await import("../identity/helpers.ts")).sign(other, { ...claims, exp });
    return { gw, token, grant, victim, forged: [none, hs, foreign], sqlitePath };
  } catch (error) {
    await gw.close();
    throw error;
  }
}

// ---------------------------------------------------------------- surface: http

const contentTypes = fc.oneof(
  { weight: 8, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=latin1",
      "application/json; charset=utf-16",
      "",
      "application/jsonx",
    ),
  },
);

function bearerVariants(ctx: FuzzContext): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${ctx.token}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        "Bearer",
        "Bearer ",
        "Basic Zm9vOmJhcg==",
        `bearer ${ctx.token}`,
        `Bearer  ${ctx.token}`,
        `Bearer ${ctx.victim}`,
      ),
    },
  );
}

function withAuth(
  headers: Record<string, string>,
  authorization: string | undefined,
): Record<string, string> {
  return authorization === undefined ? headers : { ...headers, authorization };
}

function proposalCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.constantFrom(...formatNames),
      fc.oneof({ weight: 4, arbitrary: fc.constant("same") }, fc.constantFrom("auto", "bogus", "")),
      fc.nat(),
      fc.array(opArb, { maxLength: 3 }),
      fc.array(opArb, { maxLength: 1 }),
      fc.boolean(),
      textOpArb,
      contentTypes,
      bearerVariants(ctx),
    )
    .map(([format, formatField, _n, payloadOps, envelopeOps, execute, textOp, contentType, auth]) => {
      const payload = payloadOps.reduce(applyOp, formatBases[format]?.() ?? null);
      const envelope: Json = {
        format: formatField === "same" ? format : formatField,
        payload,
        ...(execute ? { execute: true } : {}),
      };
      const body = applyTextOp(JSON.stringify(envelopeOps.reduce(applyOp, envelope)), textOp);
      return {
        kind: "http",
        label: `POST /v1/proposals ${format}`,
        method: "POST",
        route: "/v1/proposals",
        headers: withAuth({ "content-type": contentType }, auth),
        body,
      };
    });
}

function flipChar(text: string, at: number, bit: number): string {
  if (text.length === 0) return text;
  const i = at % text.length;
  const code = text.charCodeAt(i) ^ (1 << (bit % 7));
  return text.slice(0, i) + String.fromCharCode(code) + text.slice(i + 1);
}

function executeCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const grant = fc.oneof(
    { weight: 2, arbitrary: fc.constant(ctx.grant) },
    { weight: 4, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([at, bit]) => flipChar(ctx.grant, at, bit)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ctx.token,
        "",
        "a.b.c",
        `${ctx.grant}.x`,
        ctx.grant.split(".").reverse().join("."),
      ),
    },
    { weight: 1, arbitrary: oddString },
  );
  return fc
    .tuple(
      grant,
      mutated(() => ({ tool: "repo.read", arguments: readArgs() })),
      fc.boolean(),
      textOpArb,
      bearerVariants(ctx),
    )
    .map(([g, call, asCall, textOp, auth]) => {
      const body: Json =
        asCall || call === null || typeof call !== "object" || Array.isArray(call)
          ? { grant: g, call }
          : { grant: g, ...call };
      return {
        kind: "http",
        label: "POST /v1/execute",
        method: "POST",
        route: "/v1/execute",
        headers: withAuth({ "content-type": "application/json" }, auth),
        body: applyTextOp(JSON.stringify(body), textOp),
      };
    });
}

const queryKeys = fc.constantFrom(
  "subject",
  "tenant",
  "action",
  "decision",
  "reason",
  "resource_type",
  "resource_id",
  "since",
  "until",
  "limit",
  "cursor",
  "__proto__",
  "",
  "limit[]",
);
const queryValues = fc.oneof(
  oddString,
  fc.constantFrom(
    "0",
    "-1",
    "501",
    "1e3",
    "50",
    "allow",
    "deny",
    "2026-01-01T00:00:00Z",
    "not-a-date",
    "%",
    "%zz",
    "a&b=c",
  ),
  fc.integer().map(String),
);

/** encodeURIComponent, with lone surrogates (which it refuses) replaced. */
function uriEncode(text: string): string {
  return encodeURIComponent(text.replace(/\p{Cs}/gu, "\ufffd"));
}

function decisionsCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.array(fc.tuple(queryKeys, queryValues, fc.boolean()), { maxLength: 5 }),
      fc.boolean(),
      bearerVariants(ctx),
    )
    .map(([pairs, byId, auth]) => {
      const query = pairs
        .map(([k, v, raw]) => (raw ? `${k}=${v.replace(/[#\s]/g, "")}` : `${uriEncode(k)}=${uriEncode(v)}`))
        .join("&");
      const first = pairs[0]?.[1] ?? "x";
      const route = byId ? `/v1/decisions/${uriEncode(first)}` : `/v1/decisions?${query}`;
      return {
        kind: "http",
        label: byId ? "GET /v1/decisions/:id" : "GET /v1/decisions",
        method: "GET",
        route,
        headers: withAuth({}, auth),
      };
    });
}

function resourcesCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const base = (): Json => ({ owner: "fuzzer", tenant: "demo", attributes: { sensitive_paths: [".env"] } });
  return fc
    .tuple(
      fc.oneof(fc.constant("workspace"), oddString),
      fc.oneof(
        fc.integer({ min: 0, max: 20 }).map((n) => `ws-fuzz-${n}`),
        oddString,
      ),
      mutated(base),
      textOpArb,
      contentTypes,
      bearerVariants(ctx),
    )
    .map(([type, id, body, textOp, contentType, auth]) => ({
      kind: "http",
      label: "PUT /v1/resources",
      method: "PUT",
      route: `/v1/resources/${uriEncode(type)}/${uriEncode(id)}`,
      headers: withAuth({ "content-type": contentType }, auth),
      body: applyTextOp(JSON.stringify(body), textOp),
    }));
}

/** Names near the hidden tool's (and a visible one's), and its own: what a model might guess. */
const nearToolNames = fc.oneof(
  fc.constantFrom(
    "vault.exprt",
    "vault-export",
    "vault_exprt",
    "vault.expor",
    "vault.exports",
    "Vault.Export",
    "vault export",
    "vault",
    "vault.export",
    "vault_export",
    "repo.raed",
    "repo_reed",
  ),
  fc
    .tuple(fc.constantFrom("vault.export", "vault_export"), fc.nat(), fc.nat())
    .map(([name, at, bit]) => flipChar(name, at, bit)),
);

/** An unknown (or hidden) tool on each entrance: its suggestions must never name a hidden tool. */
function unknownToolCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(nearToolNames, fc.constantFrom("proposals", "execute", "mcp"))
    .map(([name, route]): FuzzCase => {
      const headers = { "content-type": "application/json", authorization: `Bearer ${ctx.token}` };
      if (route === "mcp") {
        return {
          kind: "http",
          mcp: true,
          label: "POST /mcp tools/call unknown tool",
          method: "POST",
          route: "/mcp",
          headers: { ...headers, accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name, arguments: {} },
          }),
        };
      }
      const body =
        route === "proposals"
          ? { format: "canonical", payload: { calls: [{ id: "c1", tool: name, arguments: {} }] } }
          : { grant: ctx.grant, tool: name, arguments: {} };
      return {
        kind: "http",
        label: `POST /v1/${route} unknown tool`,
        method: "POST",
        route: `/v1/${route}`,
        headers,
        body: JSON.stringify(body),
      };
    });
}

/** A grant whose workspace changed after its decision, presented as is or mutated. */
function staleCase(): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.uuid(),
      fc.constantFrom("owner" as const, "attributes" as const),
      fc.array(opArb, { maxLength: 2 }),
    )
    .map(([id, change, ops]) => ({
      kind: "stale",
      label: `POST /v1/execute stale grant (${change})`,
      workspace: `ws-stale-${id}`,
      change,
      ops,
    }));
}

function httpCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    { weight: 12, arbitrary: proposalCase(ctx) },
    { weight: 4, arbitrary: executeCase(ctx) },
    { weight: 2, arbitrary: decisionsCase(ctx) },
    { weight: 2, arbitrary: resourcesCase(ctx) },
    { weight: 1, arbitrary: unknownToolCase(ctx) },
    { weight: 1, arbitrary: staleCase() },
  );
}

// ---------------------------------------------------------------- surface: mcp

const mcpBases: Record<string, () => Json> = {
  initialize: () => ({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
  }),
  "notifications/initialized": () => ({ jsonrpc: "2.0", method: "notifications/initialized" }),
  "tools/list": () => ({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
  "tools/call": () => ({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "repo_read", arguments: readArgs() },
  }),
  "tools/call search": () => ({
    jsonrpc: "2.0",
    id: "s",
    method: "tools/call",
    params: { name: "repo_search", arguments: searchArgs(), _meta: { progressToken: 1 } },
  }),
  "notifications/cancelled": () => ({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 3, reason: "fuzz" },
  }),
  ping: () => ({ jsonrpc: "2.0", id: 4, method: "ping" }),
  unknown: () => ({ jsonrpc: "2.0", id: 5, method: "resources/list" }),
};
const mcpNames = Object.keys(mcpBases);

function mcpMessage(): fc.Arbitrary<{ name: string; message: Json }> {
  return fc
    .tuple(fc.constantFrom(...mcpNames), fc.array(opArb, { maxLength: 3 }))
    .map(([name, ops]) => ({ name, message: ops.reduce(applyOp, mcpBases[name]?.() ?? null) }));
}

function mcpCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 5, arbitrary: mcpMessage().map((m) => ({ name: m.name, body: m.message })) },
        {
          weight: 1,
          arbitrary: fc.array(mcpMessage(), { minLength: 0, maxLength: 4 }).map((ms) => ({
            name: "batch",
            body: ms.map((m) => m.message),
          })),
        },
      ),
      textOpArb,
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom("application/json", "application/json, text/event-stream") },
        { weight: 1, arbitrary: fc.constantFrom(undefined, "text/event-stream", "*/*", "text/html", "") },
      ),
      contentTypes,
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom("2025-06-18", "2025-11-25", "1999-01-01", "", "\u00ff") },
      ),
      fc.oneof(
        { weight: 20, arbitrary: fc.constant("POST") },
        { weight: 1, arbitrary: fc.constantFrom("GET", "DELETE", "PUT") },
      ),
      bearerVariants(ctx),
      fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: oddString }),
    )
    .map(([{ name, body }, textOp, accept, contentType, protocol, method, auth, session]) => {
      const headers: Record<string, string> = { "content-type": contentType };
      if (accept !== undefined) headers.accept = accept;
      if (protocol !== undefined) headers["mcp-protocol-version"] = protocol;
      if (session !== undefined) headers["mcp-session-id"] = session.replace(/[^\x20-\x7e]/g, "");
      return {
        kind: "http",
        mcp: true,
        label: `${method} /mcp ${name}`,
        method,
        route: "/mcp",
        headers: withAuth(headers, auth),
        ...(method === "GET" ? {} : { body: applyTextOp(JSON.stringify(body), textOp) }),
      };
    });
}

// ---------------------------------------------------------------- surface: token

type TokenOp =
  | { op: "flip"; segment: number; at: number; bit: number }
  | { op: "header"; change: Json; key: string }
  | { op: "payload"; key: string; value: Json }
  | { op: "huge"; size: number }
  | { op: "chars"; at: number; text: string }
  | { op: "segments"; how: "drop" | "extra" | "empty-sig" | "swap" }
  | { op: "forged"; which: number };

const tokenOpArb: fc.Arbitrary<TokenOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("flip" as const),
      segment: fc.integer({ min: 0, max: 2 }),
      at: fc.nat(),
      bit: fc.integer({ min: 0, max: 6 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.record({
        op: fc.constant("header" as const),
        key: fc.constant("alg"),
        change: fc.constantFrom<Json>(
          "none",
          "None",
          "HS256",
          "RS256",
          "ES256",
          "PS256",
          "EdDSA ",
          "",
          null,
          ["EdDSA"],
        ),
      }),
      fc.record({
        op: fc.constant("header" as const),
        key: fc.constant("crit"),
        change: fc.constantFrom<Json>(["exp"], ["b64"], ["x-unknown"], [], "b64", [1]),
      }),
      fc.record({
        op: fc.constant("header" as const),
        key: fc.constant("kid"),
        change: fc.oneof(
          fc.constantFrom<Json>(
            "../../../../etc/passwd",
            "' OR 1=1 --",
            "",
            null,
            7,
            "\u0000",
            "a".repeat(100_000),
          ),
          oddString,
        ),
      }),
      fc.record({
        op: fc.constant("header" as const),
        key: fc.constantFrom("jku", "x5u", "jwk", "b64", "typ", "__proto__", "zip"),
        change: oddValue,
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("payload" as const),
      key: fc.constantFrom("iss", "aud", "sub", "exp", "nbf", "iat", "tnt", "roles", "__proto__"),
      value: oddValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("huge" as const),
      size: fc.integer({ min: 5_000, max: 400_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("chars" as const),
      at: fc.nat(),
      text: fc.constantFrom("=", "+", "/", " ", "\t", "%", "é", "\u0000", "..", "\n"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("segments" as const),
      how: fc.constantFrom("drop", "extra", "empty-sig", "swap"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("forged" as const), which: fc.nat() }) },
);

function reencode(segment: string, change: (value: Record<string, unknown>) => void): string {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    return segment;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return segment;
  const record: Record<string, unknown> = { ...value };
  change(record);
  return Buffer.from(JSON.stringify(record)).toString("base64url");
}

function applyTokenOp(token: string, op: TokenOp, forged: readonly string[]): string {
  const parts = token.split(".");
  const [h = "", p = "", s = ""] = parts;
  switch (op.op) {
    case "flip": {
      const next = [h, p, s];
      next[op.segment] = flipChar(next[op.segment] ?? "", op.at, op.bit);
      return next.join(".");
    }
    case "header":
      return [reencode(h, (r) => setOwn(r, op.key, op.change)), p, s].join(".");
    case "payload":
      return [h, reencode(p, (r) => setOwn(r, op.key, op.value)), s].join(".");
    case "huge":
      return [h, p + "A".repeat(op.size), s].join(".");
    case "chars": {
      const at = op.at % (token.length + 1);
      return token.slice(0, at) + op.text + token.slice(at);
    }
    case "segments":
      if (op.how === "drop") return [h, p].join(".");
      if (op.how === "extra") return [h, p, s, s].join(".");
      if (op.how === "empty-sig") return [h, p, ""].join(".");
      return [p, h, s].join(".");
    case "forged":
      return forged[op.which % forged.length] ?? token;
  }
}

function tokenCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      fc.array(tokenOpArb, { minLength: 1, maxLength: 3 }),
      fc.constantFrom("direct", "proposals", "decisions", "mcp"),
      fc.constantFrom("Bearer ", "Bearer ", "Bearer ", "bearer ", "Bearer  ", "BEARER "),
    )
    .map(([ops, via, scheme]): FuzzCase => {
      const token = ops.reduce((t, op) => applyTokenOp(t, op, ctx.forged), ctx.victim);
      const authorization = `${scheme}${token}`;
      const label = `token via ${via}`;
      // fetch refuses control characters in a header (no client can send them): verify directly.
      const sendable = /^[\t\x20-\x7e\x80-\xff]*$/.test(authorization);
      if (via === "direct" || !sendable)
        return { kind: "verify", label: "token via direct", authorization, token };
      if (via === "decisions")
        return {
          kind: "http",
          label,
          method: "GET",
          route: "/v1/decisions?limit=1",
          headers: { authorization },
          token,
        };
      if (via === "mcp")
        return {
          kind: "http",
          mcp: true,
          label,
          method: "POST",
          route: "/mcp",
          headers: { authorization, "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(mcpBases["tools/list"]?.()),
          token,
        };
      return {
        kind: "http",
        label,
        method: "POST",
        route: "/v1/proposals",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify({ format: "canonical", payload: formatBases.canonical?.() }),
        token,
      };
    });
}

// ---------------------------------------------------------------- properties

const jsonRpcError = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  // Writ puts the WritError in `data`, or in `data.error` beside the call's decision.
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    data: z.union([writErrorSchema, z.object({ error: writErrorSchema })]),
  }),
});
const jsonRpcResult = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]),
  result: z.unknown(),
});
const jsonRpcAnswer = z.union([jsonRpcResult, jsonRpcError]);

/** Whether `token` decodes to the very header, payload and signature bytes of `valid`. */
function sameBytes(token: string, valid: string): boolean {
  // Whitespace around the credential is the header's, not the token's (RFC 9110 trims it).
  const a = token.trim().split(".");
  const b = valid.split(".");
  if (a.length !== 3 || b.length !== 3) return false;
  return a.every((segment, i) => {
    if (!/^[A-Za-z0-9_-]*$/.test(segment)) return false;
    return Buffer.from(segment, "base64url").equals(Buffer.from(b[i] ?? "", "base64url"));
  });
}

/**
 * Answers that break a property for a reason outside Writ's code, each found by this harness and
 * reported on issue 15. They are counted under their own outcome (`<status> known:<name>`) and
 * printed, not failed: the CI sample stays green while the deviation stands. Remove an entry once
 * its cause is fixed; the harness then checks the property in full again.
 */
export const knownDeviations: {
  name: string;
  why: string;
  matches: (status: number, text: string) => boolean;
}[] = [
  {
    name: "node-431",
    why: "Node's HTTP parser refuses headers over 16 KB (a huge bearer token) with an empty 431 before Writ sees the request",
    matches: (status, text) => status === 431 && text === "",
  },
];

/** The problems of one JSON-RPC message answered on /mcp. */
function checkRpcMessage(message: unknown): string[] {
  if (jsonRpcAnswer.safeParse(message).success) return [];
  return [
    `a JSON-RPC answer that is neither a result nor an error with WritError data: ${JSON.stringify(message).slice(0, 300)}`,
  ];
}

/** The problems of an /mcp answer's body: JSON-RPC (one message, a batch, or SSE events). */
function checkRpcBody(text: string, json: unknown): string[] {
  if (/^(event|data|id|retry):/.test(text)) {
    const problems: string[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line.slice(5));
      } catch {
        problems.push("an SSE event whose data is not JSON");
        continue;
      }
      if (z.object({ method: z.string() }).safeParse(parsed).success) continue; // notifications
      problems.push(...checkRpcMessage(parsed));
    }
    return problems;
  }
  return (Array.isArray(json) ? json : [json]).flatMap(checkRpcMessage);
}

const isRpc = (json: unknown) =>
  Array.isArray(json) || z.object({ jsonrpc: z.unknown() }).safeParse(json).success;

/** The problems of one answer (empty when it has every property). */
function checkAnswer(
  c: FuzzCase & { kind: "http" },
  status: number,
  text: string,
  json: unknown,
  valid: string,
): string[] {
  const problems: string[] = [...hiddenSuggestions(text)];
  if (status >= 500) problems.push(`status ${status}`);
  if (status < 200 || (status >= 300 && status < 400))
    problems.push(`status ${status} is neither 2xx nor 4xx`);
  if (c.token !== undefined && status < 300 && !sameBytes(c.token, valid)) {
    problems.push(`a mutated token was accepted (status ${status})`);
  }
  if (text === "" && status < 300) return problems; // 202 to notifications, 204
  if (c.mcp && (status < 300 || isRpc(json))) return [...problems, ...checkRpcBody(text, json)];
  // A 2xx from the API is its answer (202 from /v1/proposals: a decision list awaiting approval).
  if (status >= 400 && !writErrorSchema.safeParse(json).success)
    problems.push(`a ${status} whose body is not a WritError: ${text.slice(0, 300)}`);
  return problems;
}

/** An unknown tool's suggestions (`closest first: …`) that name a tool discovery hides. */
function hiddenSuggestions(text: string): string[] {
  return [...text.matchAll(/closest first: ([^"]*)/g)]
    .filter((match) => HIDDEN_TOOL_NAMES.test(match[1] ?? ""))
    .map((match) => `a suggestion names a hidden tool: ${match[0].slice(0, 300)}`);
}

function show(c: FuzzCase): string {
  const cut = (s: string) => (s.length > 400 ? `${s.slice(0, 400)}… (${s.length} chars)` : s);
  if (c.kind === "verify") return `IdentityVerifier.verify(${cut(JSON.stringify(c.authorization))})`;
  if (c.kind === "stale") return `stale grant: ${JSON.stringify({ ...c, label: undefined })}`;
  return `${c.method} ${cut(c.route)} headers=${cut(JSON.stringify(c.headers))}${c.body === undefined ? "" : ` body=${cut(JSON.stringify(c.body))}`}`;
}

async function runCase(
  ctx: FuzzContext,
  c: FuzzCase,
  timeoutMs: number,
): Promise<{ outcome: string; problems: string[] }> {
  if (c.kind === "verify") {
    try {
      await ctx.gw.gateway.identity.verify(c.authorization);
      const token = c.token ?? "";
      return {
        outcome: "accepted",
        problems: sameBytes(token, ctx.victim) ? [] : ["a mutated token was accepted"],
      };
    } catch (error) {
      const parsed = writErrorSchema.safeParse(error instanceof WritError ? error.toJSON() : undefined);
      if (!parsed.success)
        return { outcome: "threw", problems: [`threw something other than a WritError: ${String(error)}`] };
      if (parsed.data.category !== "unauthenticated")
        return {
          outcome: parsed.data.category,
          problems: [`refused as ${parsed.data.category}, not unauthenticated`],
        };
      return { outcome: "refused", problems: [] };
    }
  }
  if (c.kind === "stale") return staleGrant(ctx, c, timeoutMs);
  const first = await send(ctx, c, timeoutMs);
  if (first.outcome !== "network-error") return first;
  // A keep-alive socket the server closed as the client reused it (seen about once in 2 000
  // requests on a loaded machine): sent again once; a second failure is a failure.
  const again = await send(ctx, c, timeoutMs);
  return again.outcome === "network-error" ? again : { ...again, outcome: `${again.outcome} retried` };
}

async function send(
  ctx: FuzzContext,
  c: FuzzCase & { kind: "http" },
  timeoutMs: number,
): Promise<{ outcome: string; problems: string[] }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(`${ctx.gw.url}${c.route}`, {
      method: c.method,
      headers: c.headers,
      signal: controller.signal,
      ...(c.body === undefined ? {} : { body: c.body }),
    });
    const answer = await answerOf(response);
    const known = knownDeviations.find((deviation) => deviation.matches(answer.status, answer.text));
    if (known !== undefined) return { outcome: `${answer.status} known:${known.name}`, problems: [] };
    return {
      outcome: String(answer.status),
      problems: checkAnswer(c, answer.status, answer.text, answer.json, ctx.victim),
    };
  } catch (error) {
    if (controller.signal.aborted) return { outcome: "hang", problems: [`no answer within ${timeoutMs} ms`] };
    return {
      outcome: "network-error",
      problems: [
        `the request failed: ${String(error)} (${String(error instanceof Error ? error.cause : "")})`,
      ],
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One request of a sequence, with the run's timeout (a slower answer throws). Like `runCase`, a
 * request whose keep-alive socket the server closed as it was reused ("other side closed", before
 * any answer) is sent once more on a fresh connection; a timeout is not retried.
 */
async function exchange(ctx: FuzzContext, method: string, route: string, body: Json, timeoutMs: number) {
  const attempt = async () => {
    const response = await fetch(`${ctx.gw.url}${route}`, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${ctx.token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return answerOf(response);
  };
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") throw error;
    return attempt();
  }
}

/**
 * The grant of a proposal to read `args`: under a load peak the gateway may answer the fail-closed
 * deny `policy_unavailable` or `policy_too_slow` (an evaluator restarting after an overrun), which
 * is the behaviour asked of it and no grant to test with: such a setup is tried again, up to three
 * times, a second apart.
 */
async function proposeRead(ctx: FuzzContext, args: Json, timeoutMs: number) {
  let proposed: Awaited<ReturnType<typeof exchange>> | undefined;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
    proposed = await exchange(
      ctx,
      "POST",
      "/v1/proposals",
      { format: "canonical", payload: { calls: [{ id: "c1", tool: "repo.read", arguments: args }] } },
      timeoutMs,
    );
    const grant = grantAnswer.safeParse(proposed.json).data?.results[0]?.grant?.token;
    if (grant !== undefined) return { grant, retried: attempt > 0, text: proposed.text };
    if (!/"(policy_unavailable|policy_too_slow)"/.test(proposed.text)) break;
  }
  return { grant: undefined, retried: false, text: proposed?.text ?? "" };
}

const grantAnswer = z.object({
  results: z.array(z.object({ decision: z.string(), grant: z.object({ token: z.string() }).optional() })),
});

/**
 * alice's workspace; a grant to read from it; the workspace changed (handed to mallory, or its
 * attributes edited); the grant presented: never honoured, and refused `stale_revision` (409)
 * when presented with the very call it is for.
 */
async function staleGrant(
  ctx: FuzzContext,
  c: FuzzCase & { kind: "stale" },
  timeoutMs: number,
): Promise<{ outcome: string; problems: string[] }> {
  const resource = `/v1/resources/workspace/${c.workspace}`;
  const args = { workspace: c.workspace, path: "README.md" };
  try {
    const attributes = { read_paths: ["README.md"] };
    const created = await exchange(ctx, "PUT", resource, { owner: "alice", attributes }, timeoutMs);
    if (created.status !== 200) return { outcome: "setup", problems: [`setup: PUT ${created.status}`] };
    const proposed = await proposeRead(ctx, args, timeoutMs);
    const grant = proposed.grant;
    if (grant === undefined) return { outcome: "setup", problems: [`setup: no grant: ${proposed.text}`] };
    const changed = await exchange(
      ctx,
      "PUT",
      resource,
      c.change === "owner"
        ? { owner: "mallory", attributes }
        : { owner: "alice", attributes: { ...attributes, sensitive_paths: [".env"] } },
      timeoutMs,
    );
    if (changed.status !== 200) return { outcome: "setup", problems: [`setup: PUT ${changed.status}`] };
    const call = c.ops.reduce(applyOp, { tool: "repo.read", arguments: args });
    const body =
      call !== null && typeof call === "object" && !Array.isArray(call)
        ? { grant, ...call }
        : { grant, call };
    const answer = await exchange(ctx, "POST", "/v1/execute", body, timeoutMs);
    const problems: string[] = [];
    if (answer.status < 300) problems.push(`a stale grant was honoured (status ${answer.status})`);
    else if (answer.status >= 500) problems.push(`status ${answer.status}`);
    else if (!writErrorSchema.safeParse(answer.json).success)
      problems.push(`a ${answer.status} whose body is not a WritError: ${answer.text.slice(0, 300)}`);
    const category = writErrorSchema.safeParse(answer.json).data?.category;
    if (c.ops.length === 0 && (answer.status !== 409 || category !== "stale_revision"))
      problems.push(`the stale grant was refused ${answer.status} ${category ?? ""}, not 409 stale_revision`);
    const outcome = `${answer.status}${category === undefined ? "" : ` ${category}`}`;
    return { outcome: proposed.retried ? `${outcome} (setup retried)` : outcome, problems };
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? ` (${String(error.cause)})` : "";
    const outcome = error instanceof Error && error.name === "TimeoutError" ? "hang" : "network-error";
    return { outcome, problems: [`the sequence failed: ${String(error)}${cause}`] };
  }
}

const arbitraries: Record<Surface, (ctx: FuzzContext) => fc.Arbitrary<FuzzCase>> = {
  http: httpCase,
  mcp: mcpCase,
  token: tokenCase,
};

/** Input `index` of `surface` in a run seeded `seed`. */
export function caseOf(ctx: FuzzContext, surface: Surface, seed: number, index: number): FuzzCase {
  const [c] = fc.sample(arbitraries[surface](ctx), { seed: seedOf(seed, surface, index), numRuns: 1 });
  if (c === undefined) throw new Error("fast-check generated no input");
  return c;
}

/**
 * Runs `runs` inputs split evenly over the surfaces (or input `only` of each), against the
 * gateway of `ctx`, then verifies the decision log's chain.
 */
export async function runFuzz(ctx: FuzzContext, options: FuzzOptions): Promise<FuzzReport> {
  const chosen = options.surfaces ?? surfaces;
  const concurrency = options.concurrency ?? 8;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const jobs: { surface: Surface; index: number }[] = [];
  const per = Math.ceil(options.runs / chosen.length);
  for (const surface of chosen) {
    if (options.only !== undefined) jobs.push({ surface, index: options.only });
    else for (let index = 0; index < per; index += 1) jobs.push({ surface, index });
  }
  // Interleave the surfaces so a partial run covers all of them.
  jobs.sort((a, b) => a.index - b.index || chosen.indexOf(a.surface) - chosen.indexOf(b.surface));
  const counts: FuzzReport["counts"] = {};
  const failures: FuzzFailure[] = [];
  const slowest: FuzzReport["slowest"] = [];
  const started = Date.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (;;) {
      const job = jobs[next];
      next += 1;
      if (job === undefined) return;
      const c = caseOf(ctx, job.surface, options.seed, job.index);
      const began = Date.now();
      const { outcome, problems } = await runCase(ctx, c, timeoutMs);
      const ms = Date.now() - began;
      if (slowest.length < 5 || ms > (slowest.at(-1)?.ms ?? 0)) {
        slowest.push({ ms, surface: job.surface, index: job.index, input: show(c) });
        slowest.sort((a, b) => b.ms - a.ms);
        slowest.splice(5);
      }
      const bySurface = counts[job.surface] ?? {};
      const byLabel = bySurface[c.label] ?? {};
      byLabel[outcome] = (byLabel[outcome] ?? 0) + 1;
      bySurface[c.label] = byLabel;
      counts[job.surface] = bySurface;
      for (const problem of problems) {
        failures.push({
          surface: job.surface,
          index: job.index,
          seed: options.seed,
          label: c.label,
          problem,
          input: show(c),
        });
      }
      done += 1;
      if (options.progress && done % 1000 === 0) options.progress(done, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  const verified = await ctx.gw.gateway.log.verify();
  const chain = verified.ok
    ? { ok: true, entries: verified.entries }
    : { ok: false, entries: verified.entries_checked, detail: JSON.stringify(verified.first_broken) };
  const tamper =
    options.tamperEntries === 0
      ? undefined
      : await tamperCheck(ctx.gw, ctx.sqlitePath, {
          seed: options.seed,
          entries: options.tamperEntries ?? 1000,
        });
  return {
    counts,
    failures,
    inputs: jobs.length,
    elapsedMs: Date.now() - started,
    chain,
    slowest,
    ...(tamper === undefined ? {} : { tamper }),
  };
}
