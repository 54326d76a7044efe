/**
 * Refusals on the record without filling the disk (issue 15).
 *
 * - `trackRefusals(fn)` runs one request and says whether a refusal (an entry deciding `deny` or
 *   `error`) was appended while it ran, so that a surface that logs its own refusals (the
 *   pipeline, tenancy, approvals) is not logged twice by the HTTP layer's catch-all.
 * - `RefusalAggregator` turns a flood of identical refusals from one source into a bounded number
 *   of entries: the first of a window is appended at once; the rest of the window are counted,
 *   and summarized in one entry (with their count and first and last request ids) when the
 *   window closes, or when the log drains at shutdown. Nothing is lost: the counts of a key's
 *   entries add up to the refusals seen.
 */
import { callerRequestIdOf } from "./caller-request-ids.ts";
import type { DecisionParts } from "./log.ts";

interface TrackedRequest {
  refusalLogged: boolean;
}

/**
 * The requests being tracked, by request id. Not an AsyncLocalStorage: one in use makes Node run
 * a promise hook for every promise of the process, a cost every request paid (issue 16). The log
 * knows each append's request id; a caller may send the same `X-Request-Id` on two requests at
 * once, so an append whose id is tracked more than once marks none of them: each such request
 * then logs its own refusal (a refusal on the record twice rather than none).
 */
const tracked = new Map<string, TrackedRequest[]>();

/** Called by the log for every append: notes a refusal in the request that appended it. */
export function noteAppend(parts: Pick<DecisionParts, "decision" | "request_id">): void {
  if (parts.decision !== "deny" && parts.decision !== "error") return;
  const requests = tracked.get(parts.request_id);
  if (requests?.length === 1) requests[0]!.refusalLogged = true;
}

/** Runs `fn` (request `requestId`); answers whether a refusal was appended for it while it ran. */
export async function trackRefusals(
  requestId: string,
  fn: () => Promise<void>,
): Promise<{ refusalLogged: boolean }> {
  const request: TrackedRequest = { refusalLogged: false };
  const requests = tracked.get(requestId);
  if (requests) requests.push(request);
  else tracked.set(requestId, [request]);
  try {
    await fn();
  } finally {
    const list = tracked.get(requestId);
    if (list?.length === 1) tracked.delete(requestId);
    else list?.splice(list.indexOf(request), 1);
  }
  return request;
}

/**
 * What makes two refusals "identical" for aggregation: the message with what varies from one
 * request to the next (quoted values, numbers and times) left out, so that a flood of the same
 * refusal is one key while different reasons (an expired token, an unknown issuer) stay apart,
 * and a caller cannot open a window per request by varying what it sends.
 */
export function refusalReason(category: string, message: string): string {
  const shape = message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/[0-9][0-9:.TZ+-]*/g, "#")
    .slice(0, 200);
  return `${category}: ${shape}`;
}

export interface RefusalLog {
  append(parts: DecisionParts): Promise<unknown>;
}

export interface RefusalAggregatorOptions {
  /** How long identical refusals are counted into one summary entry. */
  windowMs: number;
}

interface Window {
  first: DecisionParts;
  started: Date;
  /** Refusals since the first (which was logged at once). */
  count: number;
  firstCounted: string | undefined;
  lastRequestId: string;
  /** The ids the callers of the first counted and the last refusal sent, if they sent one. */
  firstCountedCaller: string | undefined;
  lastCaller: string | undefined;
  timer: NodeJS.Timeout;
}

export class RefusalAggregator {
  readonly #log: RefusalLog;
  readonly #windowMs: number;
  readonly #windows = new Map<string, Window>();

  constructor(log: RefusalLog, options: RefusalAggregatorOptions) {
    this.#log = log;
    this.#windowMs = options.windowMs;
  }

  /** Open windows (for tests and metrics). */
  get open(): number {
    return this.#windows.size;
  }

  /**
   * Records one refusal under `key` (its source and reason): the first of a window is appended
   * (and awaited), the others only counted.
   */
  async record(key: string, refusal: DecisionParts): Promise<void> {
    // On the record (now or in the window's summary): the request logged its refusal.
    noteAppend(refusal);
    // Read now, while the request is answered: a summary is appended after it was.
    const caller = refusal.caller_request_id ?? callerRequestIdOf(refusal.request_id);
    const parts = { ...refusal, caller_request_id: caller };
    const open = this.#windows.get(key);
    if (open) {
      if (open.count === 0) open.firstCountedCaller = caller;
      open.count += 1;
      open.firstCounted ??= parts.request_id;
      open.lastRequestId = parts.request_id;
      open.lastCaller = caller;
      return;
    }
    const timer = setTimeout(() => {
      this.#close(key).catch((error: unknown) =>
        console.error("decision log: a refusal summary failed:", error),
      );
    }, this.#windowMs);
    timer.unref();
    this.#windows.set(key, {
      first: parts,
      started: new Date(),
      count: 0,
      firstCounted: undefined,
      lastRequestId: parts.request_id,
      firstCountedCaller: undefined,
      lastCaller: caller,
      timer,
    });
    await this.#log.append(withCount(parts, { count: 1, window_ms: this.#windowMs }));
  }

  /** Closes every window: their summaries are appended (at shutdown, before the log drains). */
  async flush(): Promise<void> {
    await Promise.all([...this.#windows.keys()].map((key) => this.#close(key)));
  }

  async #close(key: string): Promise<void> {
    const w = this.#windows.get(key);
    if (!w) return;
    this.#windows.delete(key);
    clearTimeout(w.timer);
    if (w.count === 0) return;
    await this.#log.append(
      withCount(
        { ...w.first, request_id: w.lastRequestId, caller_request_id: w.lastCaller },
        {
          count: w.count,
          window_ms: this.#windowMs,
          summarized: {
            from: w.started.toISOString(),
            to: new Date().toISOString(),
            first_request_id: w.firstCounted ?? w.lastRequestId,
            last_request_id: w.lastRequestId,
            ...(w.firstCountedCaller === undefined ? {} : { first_caller_request_id: w.firstCountedCaller }),
            ...(w.lastCaller === undefined ? {} : { last_caller_request_id: w.lastCaller }),
          },
        },
      ),
    );
  }
}

/** The entry with its aggregate under `input.aggregate` (the input is kept whole otherwise). */
function withCount(parts: DecisionParts, aggregate: Record<string, unknown>): DecisionParts {
  return { ...parts, input: { refused: parts.input, aggregate } };
}
