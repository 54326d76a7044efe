/**
 * The `limits:` section of the gateway configuration: budgets and rate limits on what callers may
 * do. Each limit has a unique name, a match (which calls it applies to), what it is counted per,
 * and one kind:
 *
 * - `calls` per `window_s` (a token bucket of `burst`, default `calls`, refilled at
 *   calls / window_s per second); match `side_effect: [committing]` for committing calls;
 * - `steps`: granted calls per session, never refilled (a new session starts a new budget);
 * - `value: {pointer, max, window_s}`: the sum of the argument at `pointer` (a bucket of `max`
 *   that drains at max / window_s per second).
 */
import { z } from "zod";
import { parsePointer } from "../core/json-pointer.ts";

export const sideEffects = ["none", "reversible", "committing"] as const;
export const limitDimensions = ["tenant", "subject", "session", "tool"] as const;
export type LimitDimension = (typeof limitDimensions)[number];

const names = z.array(z.string().min(1)).min(1);

const matchSchema = z
  .object({
    /** Tenants the limit applies to (default: every tenant). */
    tenants: names.optional(),
    /** Subject ids the limit applies to (default: every subject). */
    subjects: names.optional(),
    /** Contract names (`repo.search`) the limit applies to (default: every tool). */
    tools: names.optional(),
    /** Side-effect classes the limit applies to (default: every class). */
    side_effect: z.array(z.enum(sideEffects)).min(1).optional(),
  })
  .strict();

const positive = z.number().positive();

export const limitConfigSchema = z
  .object({
    /** Unique; names the limit in `input.context.usage`, refusals and metrics. */
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "a name of 1 to 64 letters, digits, '_', '.' or '-'"),
    match: matchSchema.default({}),
    /**
     * What the limit is counted per (default: subject). A subject is counted within its tenant,
     * and a session within its subject; calls without a session share their subject's one
     * "no session" count.
     */
    per: z.array(z.enum(limitDimensions)).optional(),
    calls: z.number().int().positive().optional(),
    window_s: positive.optional(),
    /** The most calls at once (the bucket's size); default `calls`. */
    burst: z.number().int().positive().optional(),
    steps: z.number().int().positive().optional(),
    value: z
      .object({
        /** JSON Pointer to a numeric argument (`/amount`). */
        pointer: z.string().refine((p) => p !== "" && parsePointer(p) !== undefined, {
          message: "a JSON Pointer to an argument, e.g. /amount",
        }),
        max: positive,
        window_s: positive,
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((limit, ctx) => {
    const kinds = [
      limit.calls !== undefined && "calls",
      limit.steps !== undefined && "steps",
      limit.value !== undefined && "value",
    ].filter((k) => k !== false);
    if (kinds.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `a limit has exactly one of calls (with window_s), steps or value; this one has ${kinds.length === 0 ? "none" : kinds.join(" and ")}`,
      });
      return;
    }
    if (limit.calls !== undefined && limit.window_s === undefined) {
      ctx.addIssue({ code: "custom", path: ["window_s"], message: "calls needs window_s (seconds)" });
    }
    if (limit.calls === undefined && (limit.window_s !== undefined || limit.burst !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [limit.window_s !== undefined ? "window_s" : "burst"],
        message: "window_s and burst belong to calls limits (a value budget has its own window_s)",
      });
    }
  });

export const limitsConfigSchema = z
  .array(limitConfigSchema)
  .default([])
  .superRefine((limits, ctx) => {
    const seen = new Set<string>();
    limits.forEach((limit, i) => {
      if (seen.has(limit.name)) {
        ctx.addIssue({
          code: "custom",
          path: [i, "name"],
          message: `another limit is named ${JSON.stringify(limit.name)}: names are unique`,
        });
      }
      seen.add(limit.name);
    });
  });

export type LimitConfig = z.output<typeof limitConfigSchema>;
export type LimitsConfig = z.output<typeof limitsConfigSchema>;
/** The section as written in the configuration, before defaults. */
export type LimitsConfigInput = z.input<typeof limitsConfigSchema>;

/** Tools a limit names that no contract declares (a typo would silently limit nothing). */
export function unknownLimitTools(limits: LimitsConfig, tools: ReadonlySet<string>): string[] {
  return limits.flatMap((limit, i) =>
    (limit.match.tools ?? [])
      .map((tool, j) => [tool, j] as const)
      .filter(([tool]) => !tools.has(tool))
      .map(
        ([tool, j]) =>
          `  /limits/${i}/match/tools/${j}: no tool named ${JSON.stringify(tool)} under tools: (limits name contracts, e.g. repo.search)`,
      ),
  );
}
