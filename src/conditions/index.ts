/**
 * Conditions enforced at dispatch (DESIGN section 2). The vocabulary is closed (`conditionSchema`
 * in core/types): the policy engine already turns an unknown condition into a denial, so every
 * condition reaching here is one Writ knows how to enforce.
 *
 * - `args_override`    — the forced values are merged into the arguments actually dispatched
 *                        (`finalArguments`); the grant's `args` digest is of the merged arguments;
 * - `max_value`        — the number at a JSON Pointer into the arguments is at most `max`, else
 *                        `policy_denied`;
 * - `require_revision` — compare-and-swap: the resource's current revision must still be the
 *                        given one, else `stale_revision`;
 * - `redact_result`    — applied to the result (src/results);
 * - `max_uses`         — the grant's use count (the store's consumeGrant).
 */
import { WritError } from "../core/errors.ts";
import { atPointer } from "../core/json-pointer.ts";
import type { Condition } from "../core/types.ts";

export { atPointer } from "../core/json-pointer.ts";

/** The arguments with every `args_override` applied (a new object; the input is not changed). */
export function finalArguments(
  args: Record<string, unknown>,
  conditions: readonly Condition[],
): Record<string, unknown> {
  let out = args;
  for (const c of conditions) {
    if (c.type === "args_override") out = { ...out, ...structuredClone(c.args) };
  }
  return out;
}

/** Checks the conditions that depend on the arguments and the resource; throws a refusal. */
export function enforceConditions(
  conditions: readonly Condition[],
  args: Record<string, unknown>,
  currentRevision: number | undefined,
): void {
  for (const c of conditions) {
    if (c.type === "max_value") {
      const value = atPointer(args, c.path);
      if (typeof value !== "number" || !Number.isFinite(value) || !(value <= c.max)) {
        throw new WritError(
          "policy_denied",
          typeof value === "number"
            ? `${c.path} is ${value}, over the maximum of ${c.max} this grant allows`
            : `${c.path} must be a number of at most ${c.max}, and it is ${value === undefined ? "missing" : "not a number"}`,
          {
            fieldErrors: [{ path: `/arguments${c.path}`, message: `must be a number ≤ ${c.max}` }],
            suggestedFix: `send a value of at most ${c.max}, or ask for a grant with a higher limit`,
            effectCommitted: false,
          },
        );
      }
    } else if (c.type === "require_revision") {
      const current = currentRevision === undefined ? undefined : String(currentRevision);
      if (current !== c.revision) {
        throw new WritError(
          "stale_revision",
          `the resource is at revision ${current ?? "(none)"}, but this grant requires revision ${c.revision}`,
          {
            suggestedFix: "read the resource again and propose the call again",
            effectCommitted: false,
          },
        );
      }
    } else if (c.type === "args_override") {
      for (const [name, forced] of Object.entries(c.args)) {
        if (JSON.stringify(args[name]) !== JSON.stringify(forced)) {
          throw new WritError("policy_denied", `the grant forces argument ${name}`, {
            suggestedFix: "send the arguments with the forced value",
            effectCommitted: false,
          });
        }
      }
    }
  }
}

/** The `redact_result` conditions, merged. */
export function resultRedactions(conditions: readonly Condition[]): {
  paths: string[];
  classifications: string[];
} {
  const paths: string[] = [];
  const classifications: string[] = [];
  for (const c of conditions) {
    if (c.type === "redact_result") {
      paths.push(...c.paths);
      classifications.push(...c.classifications);
    }
  }
  return { paths, classifications };
}
