/**
 * The `history:` section of the gateway configuration (issue 33): facts about logged calls that
 * the policy sees in `input.context.history.<name>`. Each fact names which logged calls count
 * (`match`), what they are counted per (`per`), over which window (`window_s`) and, optionally,
 * which argument they sum (`sum`).
 *
 * Keys (`per`, `sum`): `subject`, `tenant`, `session`, `run` (a Code Mode run), `resource`
 * (`type/id`), and `args.<field>` or `args./json/pointer` (an argument of the call).
 */
import { z } from "zod";
import { parsePointer } from "../core/json-pointer.ts";
import { decisionKinds } from "../core/types.ts";

/** The longest window a fact may have: 31 days. */
export const MAX_WINDOW_S = 31 * 86_400;

const KEY_KINDS = ["subject", "tenant", "session", "run", "resource"] as const;
export type CallKeyKind = (typeof KEY_KINDS)[number];

/** A key as configured, parsed: a call's part, or an argument at a JSON Pointer. */
export type FactKey = { kind: CallKeyKind } | { kind: "args"; pointer: string };

const KEY_HELP = `one of ${KEY_KINDS.join(", ")}, args.<field> or args./json/pointer`;

/** A key's text as parsed, or undefined when it names nothing a call has. */
export function parseFactKey(text: string): FactKey | undefined {
  const kind = KEY_KINDS.find((k) => k === text);
  if (kind !== undefined) return { kind };
  if (!text.startsWith("args.") || text.length === "args.".length) return undefined;
  const rest = text.slice("args.".length);
  if (rest.startsWith("/"))
    return parsePointer(rest) === undefined ? undefined : { kind: "args", pointer: rest };
  return { kind: "args", pointer: `/${rest.replaceAll("~", "~0").replaceAll("/", "~1")}` };
}

const keySchema = z.string().refine((text) => parseFactKey(text) !== undefined, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a key: use ${KEY_HELP}`,
});

const names = z.array(z.string().min(1)).min(1);

const matchSchema = z
  .object({
    /** Contract names whose logged calls count (default: every tool). */
    tools: names.optional(),
    /** The decisions that count (default: allow and allow_with_conditions). */
    decision: z.array(z.enum(decisionKinds)).min(1).optional(),
    /** Count a call only once it ran with its grant (its `writ/execute` entry), not when decided. */
    executed: z.boolean().default(false),
    /** Tenants whose calls count (default: every tenant). */
    tenants: names.optional(),
  })
  .strict();

export const historyFactSchema = z
  .object({
    /** Unique; `input.context.history.<name>`. */
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, {
      message:
        "a name of 1 to 64 letters, digits or '_', not starting with a digit (Rego reads it as a field)",
    }),
    match: matchSchema.prefault({}),
    /** What the fact is counted per (default: nothing but the tenant, which every key includes). */
    per: z.array(keySchema).default([]),
    window_s: z
      .number()
      .int("window_s is a whole number of seconds")
      .min(1, "window_s is at least 1 (second)")
      .max(MAX_WINDOW_S, `window_s is at most ${MAX_WINDOW_S} (31 days)`),
    /** The numeric argument summed (`args.amount`): `sum` in the fact's value. */
    sum: z
      .string()
      .refine((text) => parseFactKey(text)?.kind === "args", {
        error: (issue) =>
          `sum names an argument (args.<field> or args./json/pointer), not ${JSON.stringify(issue.input)}`,
      })
      .optional(),
  })
  .strict()
  .superRefine((fact, ctx) => {
    const seen = new Set<string>();
    fact.per.forEach((key, i) => {
      if (seen.has(key))
        ctx.addIssue({ code: "custom", path: ["per", i], message: `${key} is listed twice` });
      seen.add(key);
    });
    const allowed = fact.match.decision?.some((d) => d === "allow" || d === "allow_with_conditions") ?? true;
    if (fact.match.executed && !allowed) {
      ctx.addIssue({
        code: "custom",
        path: ["match", "decision"],
        message: "an executed call was allowed: list allow (or drop decision) with executed: true",
      });
    }
  });

export const historyConfigSchema = z
  .array(historyFactSchema)
  .default([])
  .superRefine((facts, ctx) => {
    const seen = new Set<string>();
    facts.forEach((fact, i) => {
      if (seen.has(fact.name)) {
        ctx.addIssue({
          code: "custom",
          path: [i, "name"],
          message: `another history fact is named ${JSON.stringify(fact.name)}: names are unique`,
        });
      }
      seen.add(fact.name);
    });
  });

export type HistoryFactConfig = z.output<typeof historyFactSchema>;
export type HistoryConfig = z.output<typeof historyConfigSchema>;

/** Tools a fact names that no contract declares (a typo would silently count nothing). */
export function unknownHistoryTools(facts: HistoryConfig, tools: ReadonlySet<string>): string[] {
  return facts.flatMap((fact, i) =>
    (fact.match.tools ?? [])
      .map((tool, j) => [tool, j] as const)
      .filter(([tool]) => !tools.has(tool))
      .map(
        ([tool, j]) =>
          `  /history/${i}/match/tools/${j}: no tool named ${JSON.stringify(tool)} under tools: (history facts name contracts, e.g. repo.read)`,
      ),
  );
}
