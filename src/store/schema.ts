/**
 * zod schemas for what a store reads back: stored rows are external data (anyone with the file can
 * edit them), so nothing is trusted because it came out of our own database.
 */
import { z } from "zod";
import { conditionSchema, decisionKinds, reasonSchema } from "../core/types.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./decision-entry.ts";

/** `prev_hash` of the first entry of a log. */
export const GENESIS_HASH = "0".repeat(64);

export const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits (SHA-256)");

const timestampSchema = z.iso.datetime({ offset: true });

/** What a decision row keeps as JSON: the entry without `seq`, `prev_hash` and `hash`. */
export const decisionBodySchema = z
  .object({
    decision_id: z.string().min(1),
    timestamp: timestampSchema,
    path: z.string(),
    input: z.unknown().optional(),
    result: z.unknown().optional(),
    bundles: z.object({ writ: z.object({ revision: z.string() }).strict() }).strict(),
    metrics: z.record(z.string(), z.number()),
    erased: z.array(z.string()),
    masked: z.array(z.string()),
    subject: z.string().nullable(),
    tenant: z.string().nullable(),
    action: z.string().nullable(),
    resource: z.object({ type: z.string(), id: z.string() }).strict().nullable(),
    decision: z.enum([...decisionKinds, "error"]),
    reasons: z.array(reasonSchema),
    error: z.string().nullable(),
    grant_jti: z.string().nullable(),
    approval_id: z.string().nullable(),
    conditions: z.array(conditionSchema),
    request_id: z.string(),
    caller_request_id: z.string().optional(),
  })
  .strict();
type DecisionBody = z.infer<typeof decisionBodySchema>;

/** A whole entry, e.g. one line of an NDJSON export, checked and rebuilt in the documented field order. */
export const decisionLogEntrySchema: z.ZodType<DecisionLogEntry> = decisionBodySchema
  .extend({ seq: z.number().int().positive(), prev_hash: hashSchema, hash: hashSchema })
  .transform((entry) => ({ ...entryFromBody(entry.seq, entry, entry.prev_hash), hash: entry.hash }));

/** Builds an entry in the documented field order (the order NDJSON exports show). */
export function entryFromBody(
  seq: number,
  body: DecisionBody,
  prevHash: string,
): Omit<DecisionLogEntry, "hash"> {
  return {
    seq,
    decision_id: body.decision_id,
    timestamp: body.timestamp,
    path: body.path,
    input: body.input,
    result: body.result,
    bundles: { writ: { revision: body.bundles.writ.revision } },
    metrics: body.metrics,
    erased: body.erased,
    masked: body.masked,
    subject: body.subject,
    tenant: body.tenant,
    action: body.action,
    resource: body.resource,
    decision: body.decision,
    reasons: body.reasons,
    error: body.error,
    grant_jti: body.grant_jti,
    approval_id: body.approval_id,
    conditions: body.conditions,
    request_id: body.request_id,
    ...(body.caller_request_id === undefined ? {} : { caller_request_id: body.caller_request_id }),
    prev_hash: prevHash,
  };
}

/** The body of a new entry, picked field by field so that nothing the type does not name is stored. */
export function bodyOfNewEntry(
  entry: NewDecisionEntry,
): Record<Exclude<keyof NewDecisionEntry, "history">, unknown> {
  // An absent caller_request_id stays absent (JSON leaves undefined out): older entries hash as they did.
  return {
    decision_id: entry.decision_id,
    timestamp: entry.timestamp,
    path: entry.path,
    input: entry.input,
    result: entry.result,
    bundles: entry.bundles,
    metrics: entry.metrics,
    erased: entry.erased,
    masked: entry.masked,
    subject: entry.subject,
    tenant: entry.tenant,
    action: entry.action,
    resource: entry.resource,
    decision: entry.decision,
    reasons: entry.reasons,
    error: entry.error,
    grant_jti: entry.grant_jti,
    approval_id: entry.approval_id,
    conditions: entry.conditions,
    request_id: entry.request_id,
    caller_request_id: entry.caller_request_id,
  };
}

export const decisionRowSchema = z.object({
  seq: z.number().int().positive(),
  entry: z.string(),
  prev_hash: z.string(),
  hash: z.string(),
});
