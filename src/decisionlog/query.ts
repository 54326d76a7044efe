/**
 * The decision-log filter as people type it — `writ logs query` flags and the console's query
 * string use the same names as `GET /v1/decisions` (snake_case, every field optional text) — and
 * its mapping onto the store's `DecisionFilter`. Values are unknown until this schema parses them.
 */
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { decisionKinds } from "../core/types.ts";
import { runOfInput } from "../store/paging.ts";
import type { DecisionFilter, DecisionLogEntry } from "../store/types.ts";

export const decisionOutcomes = [...decisionKinds, "error"] as const;

/** Empty text means "no filter" (an HTML form submits every field, filled in or not). */
const optionalText = z
  .string()
  .max(500)
  .transform((text) => text.trim())
  .optional()
  .transform((text) => (text === "" ? undefined : text));

export const decisionFilterFieldsSchema = z.object({
  subject: optionalText,
  tenant: optionalText,
  action: optionalText,
  decision: z
    .union([z.enum(decisionOutcomes), z.literal("")])
    .optional()
    .transform((value) => (value === "" ? undefined : value)),
  reason: optionalText,
  resource_type: optionalText,
  resource_id: optionalText,
  path: optionalText,
  run: optionalText,
  since: optionalText,
  until: optionalText,
});

export type DecisionFilterFields = z.output<typeof decisionFilterFieldsSchema>;

/** The filter fields that are set, as the store's filter. */
export function toDecisionFilter(fields: Partial<DecisionFilterFields>): DecisionFilter {
  return {
    ...(fields.subject ? { subject: fields.subject } : {}),
    ...(fields.tenant ? { tenant: fields.tenant } : {}),
    ...(fields.action ? { action: fields.action } : {}),
    ...(fields.decision ? { decision: fields.decision } : {}),
    ...(fields.reason ? { reason: fields.reason } : {}),
    ...(fields.resource_type ? { resourceType: fields.resource_type } : {}),
    ...(fields.resource_id ? { resourceId: fields.resource_id } : {}),
    ...(fields.path ? { path: fields.path } : {}),
    ...(fields.run ? { run: fields.run } : {}),
    ...(fields.since ? { since: fields.since } : {}),
    ...(fields.until ? { until: fields.until } : {}),
  };
}

/** Parses filter fields from any source, or throws `invalid_argument` naming the bad fields. */
export function parseDecisionFilter(value: unknown, what: string): DecisionFilter {
  const parsed = decisionFilterFieldsSchema.safeParse(value);
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${what} is malformed`, {
      fieldErrors: fieldErrorsFromZod(parsed.error),
      suggestedFix: `decision is one of ${decisionOutcomes.join(", ")}; since and until are ISO 8601 times (e.g. 2026-01-31T12:00:00Z)`,
    });
  }
  return toDecisionFilter(parsed.data);
}

/** The resource revision the policy saw, when the stored (redacted) input still says it. */
export function loggedResourceRevision(entry: DecisionLogEntry): number | string | undefined {
  const input = entry.input;
  if (typeof input !== "object" || input === null || !("resource" in input)) return undefined;
  const resource = input.resource;
  if (typeof resource !== "object" || resource === null || !("revision" in resource)) return undefined;
  const revision = resource.revision;
  return typeof revision === "number" || typeof revision === "string" ? revision : undefined;
}

/** The Code Mode run a logged entry belongs to (`input.context.run`, or `input.run` for a refused call). */
export function loggedRun(
  entry: Pick<DecisionLogEntry, "input">,
): { id: string; decision_id: string } | undefined {
  return runOfInput(entry.input);
}
