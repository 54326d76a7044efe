/**
 * One configured limit, compiled: what it matches, its bucket's size and drain rate, and the key
 * of the bucket a call is counted in.
 */
import type { CanonicalAction, LimitUsage, Subject } from "../core/types.ts";
import type { LimitConfig, LimitDimension } from "./config.ts";

export type LimitKind = LimitUsage["kind"];

/** A configured limit, ready to match calls and name buckets. */
export interface Limit {
  readonly name: string;
  readonly kind: LimitKind;
  readonly capacity: number;
  /** How much drains per second (0: a step budget). */
  readonly drainPerSecond: number;
  readonly windowS: number | undefined;
  /** The value budget's argument. */
  readonly pointer: string | undefined;
  readonly per: readonly LimitDimension[];
  readonly tenants: ReadonlySet<string> | undefined;
  readonly subjects: ReadonlySet<string> | undefined;
  readonly sideEffects: ReadonlySet<string> | undefined;
  /** Contract names; undefined: every tool. */
  readonly tools: readonly string[] | undefined;
  /** How the limit reads in a refusal: "30 calls per 60 s per subject". */
  readonly describe: string;
}

/** The parts of a call a limit matches and counts by. */
export interface MeteredCall {
  subject: Pick<Subject, "id" | "tenant">;
  action: Pick<CanonicalAction, "name" | "side_effect">;
  session: string | undefined;
}

/** A limit as configured, compiled for matching and charging. */
export function compile(c: LimitConfig): Limit {
  const set = (values: readonly string[] | undefined) => (values === undefined ? undefined : new Set(values));
  // A step budget is always per session (within its subject); the others default to per subject.
  const per: LimitDimension[] = [...(c.per ?? (c.steps !== undefined ? ["session"] : ["subject"]))];
  if (c.steps !== undefined && !per.includes("session")) per.push("session");
  const common = {
    name: c.name,
    per,
    tenants: set(c.match.tenants),
    subjects: set(c.match.subjects),
    sideEffects: set(c.match.side_effect),
    tools: c.match.tools,
  };
  const perText = per.length === 0 ? "" : ` per ${per.join(" and ")}`;
  if (c.calls !== undefined) {
    const window = c.window_s ?? 1;
    return {
      ...common,
      kind: "calls",
      capacity: c.burst ?? c.calls,
      drainPerSecond: c.calls / window,
      windowS: window,
      pointer: undefined,
      describe: `${c.calls} calls per ${window} s${c.burst === undefined ? "" : ` (bursts of ${c.burst})`}${perText}`,
    };
  }
  if (c.value !== undefined) {
    return {
      ...common,
      kind: "value",
      capacity: c.value.max,
      drainPerSecond: c.value.max / c.value.window_s,
      windowS: c.value.window_s,
      pointer: c.value.pointer,
      describe: `a total ${c.value.pointer} of ${c.value.max} per ${c.value.window_s} s${perText}`,
    };
  }
  const steps = c.steps ?? 1;
  return {
    ...common,
    kind: "steps",
    capacity: steps,
    drainPerSecond: 0,
    windowS: undefined,
    pointer: undefined,
    describe: `${steps} granted calls${perText}`,
  };
}

export /** Rounds what a bucket holds for the policy and the messages (drained buckets are fractional). */
function rounded(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** The bucket a call is counted in: the limit and the values it is counted per. */
export function bucketKey(limit: Limit, call: MeteredCall): string {
  const per = new Set(limit.per);
  const session = per.has("session");
  const subject = session || per.has("subject");
  return JSON.stringify([
    limit.name,
    subject || per.has("tenant") ? call.subject.tenant : null,
    subject ? call.subject.id : null,
    // Calls without a session share their subject's one "no session" count.
    session ? (call.session ?? null) : null,
    per.has("tool") ? call.action.name : null,
  ]);
}
