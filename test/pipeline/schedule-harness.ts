/**
 * What the scheduling tests share: in-process tools that record when each call ran (and how many
 * ran at once), and a unit gateway with those tools (the tests run it with ALLOW_ALL_POLICY of
 * test/support/counting-backend.ts).
 */
import { CompiledContractRegistry } from "../../src/contracts/index.ts";
import type { Gateway } from "../../src/core/gateway.ts";
import type { InProcessHandler } from "../../src/core/handlers.ts";
import type { UnitGateway } from "./harness.ts";

export interface Span {
  note: string;
  /** performance.now() when the call started and ended. */
  start: number;
  end: number;
  /** Date.now() when the call started (to compare with a lease's expiry). */
  startedAt: number;
}

export interface Recorder {
  spans: Span[];
  /** Calls running now, and the most that ever ran at once. */
  inFlight: number;
  peak: number;
  /** The note of the last write that ended. */
  lastWrite: string | null;
  /** Holds every call until `release()` (for waits past a bound). */
  hold(): { release(): void };
  read: InProcessHandler;
  write: InProcessHandler;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tools that take `ms` each; a write's note becomes `lastWrite` when it ends. */
export function recorder(ms: number): Recorder {
  let gate: Promise<void> | undefined;
  const run =
    (writes: boolean): InProcessHandler =>
    async ({ args }) => {
      const note = typeof args.note === "string" ? args.note : "?";
      const start = performance.now();
      const startedAt = Date.now();
      rec.inFlight += 1;
      rec.peak = Math.max(rec.peak, rec.inFlight);
      const seenBefore = rec.lastWrite;
      await sleep(ms);
      await gate;
      const seen = writes ? seenBefore : rec.lastWrite;
      if (writes) rec.lastWrite = note;
      rec.inFlight -= 1;
      rec.spans.push({ note, start, end: performance.now(), startedAt });
      return { summary: `ran ${note}`, structured_content: { note, seen } };
    };
  const rec: Recorder = {
    spans: [],
    inFlight: 0,
    peak: 0,
    lastWrite: null,
    hold() {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return { release };
    },
    read: run(false),
    write: run(true),
  };
  return rec;
}

/** A contract for the scheduling tests: arguments `{note}`, run by the recorder. */
export function contract(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const sideEffect = extra.side_effect ?? "none";
  return {
    name,
    version: "1",
    description: `the ${name} tool`,
    side_effect: sideEffect,
    idempotency: sideEffect === "committing" ? "none" : "natural",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["note"],
      properties: { note: { type: "string" } },
    },
    backend: { kind: "inprocess", handler: sideEffect === "none" ? "read" : "write" },
    ...extra,
  };
}

export const SCHEDULED_TOOLS = [
  contract("read"),
  contract("draft", { side_effect: "reversible" }),
  contract("commit", { side_effect: "committing" }),
];

/** `u`'s gateway with the recorder's tools (and `tools` more). */
export function scheduledGateway(
  u: UnitGateway,
  rec: Recorder,
  tools: Record<string, unknown>[] = [],
): Gateway {
  return {
    ...u.gw,
    contracts: CompiledContractRegistry.fromConfig([...SCHEDULED_TOOLS, ...tools]),
    handlers: new Map([
      ["read", rec.read],
      ["write", rec.write],
    ]),
  };
}

/** The recorded span of note `n{i}` (call i of the proposal). */
export function spanOf(rec: Recorder, i: number): Span {
  const span = rec.spans.find((s) => s.note === `n${i}`);
  if (span === undefined) throw new Error(`n${i} did not run`);
  return span;
}
