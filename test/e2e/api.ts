/**
 * The gateway's HTTP answers as a client reads them: zod schemas written from DESIGN sections 2,
 * 5, 7 and 8 (not imported from src/, so that a drift of the wire format fails these tests), and
 * small helpers shared by the end-to-end tests.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { expect } from "vitest";
import { z } from "zod";
import { parseDecisionFilter } from "../../src/decisionlog/query.ts";
import type { HttpAnswer, TestGateway } from "../support/gateway.ts";

export const WS = "ws-demo";
export const README_ARGS = { workspace: WS, path: "README.md" } as const;

export const fieldErrorSchema = z.strictObject({ path: z.string(), message: z.string() });

export const errorBodySchema = z.strictObject({
  status: z.literal("failed"),
  category: z.string(),
  retryable: z.boolean(),
  message: z.string(),
  field_errors: z.array(fieldErrorSchema),
  suggested_fix: z.string(),
  effect_committed: z.union([z.boolean(), z.literal("unknown")]),
  retry_after: z.number().int().min(1).optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;

export const reasonSchema = z.strictObject({
  code: z.string(),
  message: z.string(),
  visible_to_model: z.boolean(),
});

export const grantViewSchema = z.strictObject({
  token: z.string(),
  jti: z.string().min(1),
  audience: z.string(),
  expires_at: z.iso.datetime(),
  max_uses: z.number().int().positive(),
  arguments: z.record(z.string(), z.unknown()),
});

export const layeredResultSchema = z.strictObject({
  summary: z.string(),
  structured_content: z.record(z.string(), z.unknown()),
  artifact_refs: z.array(z.string()),
  provenance: z.strictObject({
    tool: z.string(),
    version: z.string(),
    target: z.string(),
    time: z.iso.datetime(),
    resource_revision: z.string().nullable(),
  }),
  execution_meta: z.strictObject({
    latency_ms: z.number().nonnegative(),
    attempt: z.number().int().positive(),
    request_id: z.string(),
    effect: z.string(),
  }),
  redacted: z.array(z.string()).optional(),
});

export const outcomeSchema = z.strictObject({
  call_id: z.string(),
  tool: z.string(),
  decision: z.enum(["allow", "deny", "require_approval", "allow_with_conditions", "error"]),
  reasons: z.array(reasonSchema),
  decision_id: z.uuid(),
  grant: grantViewSchema.optional(),
  approval: z
    .strictObject({
      id: z.string().min(1),
      status: z.enum(["pending", "approved"]),
      approver_roles: z.array(z.string()),
      expires_at: z.iso.datetime(),
    })
    .optional(),
  error: errorBodySchema.optional(),
  result: layeredResultSchema.optional(),
});
export type Outcome = z.infer<typeof outcomeSchema>;

export const answerSchema = z.strictObject({ results: z.array(outcomeSchema) });

export const logEntrySchema = z.strictObject({
  seq: z.number().int().positive(),
  decision_id: z.string(),
  timestamp: z.iso.datetime(),
  path: z.string(),
  input: z.unknown(),
  result: z.unknown().optional(),
  bundles: z.strictObject({ writ: z.strictObject({ revision: z.string() }) }),
  metrics: z.record(z.string(), z.number()),
  erased: z.array(z.string()),
  masked: z.array(z.string()),
  subject: z.string().nullable(),
  tenant: z.string().nullable(),
  action: z.string().nullable(),
  resource: z.strictObject({ type: z.string(), id: z.string() }).nullable(),
  decision: z.enum(["allow", "deny", "require_approval", "allow_with_conditions", "error"]),
  reasons: z.array(reasonSchema),
  error: z.string().nullable(),
  grant_jti: z.string().nullable(),
  approval_id: z.string().nullable(),
  conditions: z.array(z.unknown()),
  request_id: z.string(),
  caller_request_id: z.string().optional(),
  prev_hash: z.string(),
  hash: z.string(),
});
export type LogEntry = z.infer<typeof logEntrySchema>;

export const logPageSchema = z.strictObject({
  entries: z.array(logEntrySchema),
  next_cursor: z.string().optional(),
});

export const resourceSchema = z.strictObject({
  type: z.string(),
  id: z.string(),
  owner: z.string(),
  tenant: z.string(),
  revision: z.number().int(),
  attributes: z.record(z.string(), z.unknown()),
  updated_at: z.string(),
});

// ------------------------------------------------------------------------------------ helpers

const canonicalize: (value: unknown) => string | undefined = createRequire(import.meta.url)("canonicalize");

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `value`, computed here, not by Writ. */
export function digestOf(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("not JSON");
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The answer of a proposal that was accepted (HTTP 200). */
export function answerOf(answer: HttpAnswer): Outcome[] {
  expect(answer.status, answer.text).toBe(200);
  return answerSchema.parse(answer.json).results;
}

/** The only outcome of a single-call proposal. */
export function onlyOutcome(answer: HttpAnswer): Outcome {
  const results = answerOf(answer);
  expect(results).toHaveLength(1);
  const [only] = results;
  if (only === undefined) throw new Error("no result");
  return only;
}

/** The structured error answering a whole request, with its HTTP status checked. */
export function errorOf(answer: HttpAnswer, status: number): ErrorBody {
  expect(answer.status, answer.text).toBe(status);
  return errorBodySchema.parse(answer.json);
}

/** GET /v1/decisions/:id with a reviewer token. */
export async function logEntry(gw: TestGateway, decisionId: string): Promise<LogEntry> {
  const reviewer = await gw.token("rita", { roles: ["reviewer"] });
  const answer = await gw.request("GET", `/v1/decisions/${encodeURIComponent(decisionId)}`, {
    token: reviewer,
  });
  expect(answer.status, answer.text).toBe(200);
  return logEntrySchema.parse(answer.json);
}

/** Every log entry matching `query` (a query string without `limit`/`cursor`), newest first. */
/**
 * The log's entries matching `query` (the names of `GET /v1/decisions`), newest first, every
 * tenant's (and the tenant-less refusals before identity): read as the operator does (`writ logs
 * query`), since a reviewer sees their own tenant only. Serialized as the API would answer.
 */
export async function logEntries(gw: TestGateway, query: Record<string, string> = {}): Promise<LogEntry[]> {
  const filter = parseDecisionFilter(query, "the test's log query");
  const entries: LogEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await gw.gateway.log.query(filter, 500, cursor);
    entries.push(...logPageSchema.parse(JSON.parse(JSON.stringify(page))).entries);
    cursor = page.next_cursor;
  } while (cursor !== undefined);
  return entries;
}

/** The decision log's hash chain verifies end to end. */
export async function expectLogVerifies(gw: TestGateway): Promise<void> {
  const verified = await gw.gateway.log.verify();
  expect(verified).toMatchObject({ ok: true });
}

/** An OpenAI Chat `tool_calls` item. */
export function chatToolCall(id: string, name: string, args: Record<string, unknown>) {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

/**
 * `token`'s caller reads `path` of ws-demo through the gateway (so the workspace records the hash
 * it read) and gets the file's hash: the `base_hash` of an edit.
 */
export async function readForEdit(gw: TestGateway, token: string, path: string): Promise<string> {
  const read = onlyOutcome(
    await gw.propose(token, {
      format: "canonical",
      payload: canonicalCall("repo.read", { workspace: WS, path }),
      execute: true,
    }),
  );
  return z.string().parse(read.result?.structured_content.hash);
}

/** A canonical single call. */
export function canonicalCall(tool: string, args: Record<string, unknown>, id?: string) {
  return { ...(id === undefined ? {} : { id }), tool, arguments: args };
}

/**
 * alice reads src/sum.ts through the gateway, then proposes an edit the policy sends to a
 * maintainer (by default the seed chapter's repair): the id of the pending approval.
 */
export async function pendingApproval(
  gw: TestGateway,
  change: { before: string; after: string } = { before: "a - b", after: "a + b" },
): Promise<string> {
  const alice = await gw.token("alice");
  const read = onlyOutcome(
    await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall("repo.read", { workspace: WS, path: "src/sum.ts" }),
      execute: true,
    }),
  );
  const hash = z.string().parse(read.result?.structured_content.hash);
  const edit = onlyOutcome(
    await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall("repo_apply_edit", {
        workspace: WS,
        path: "src/sum.ts",
        base_hash: hash,
        ...change,
      }),
    }),
  );
  if (edit.approval === undefined)
    throw new Error(`expected a pending approval, got ${JSON.stringify(edit)}`);
  return edit.approval.id;
}
