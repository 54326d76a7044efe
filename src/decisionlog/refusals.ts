/**
 * Refusals on the record without filling the disk (issue 15).
 *
 * - The audit interceptor (`src/http/audit.ts`) logs a refused request that nothing else logged
 *   (the log notes refusals per request: `requests.ts`).
 * - `RefusalAggregator` turns a flood of identical refusals from one source into a bounded number
 *   of entries: the first of a window is appended at once; the rest of the window are counted,
 *   and summarized in one entry (with their count and first and last request ids) when the
 *   window closes, or when the log drains at shutdown. Nothing is lost: the counts of a key's
 *   entries add up to the refusals seen.
 */
import type { DecisionParts } from "./log.ts";
import type { OpenRequests } from "./requests.ts";

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
  /** The requests being answered: a counted refusal is on the record too, with its caller's id. */
  readonly requests: Pick<OpenRequests, "noteAppend" | "callerOf">;
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

/** Where the gateway's entrances put an unauthenticated caller's refusal (`Gateway.refusals`). */
export interface RefusalRecorder {
  /** Logs `refusal`, aggregated with the others of `key` (its source and route) in its window. */
  record(key: string, refusal: DecisionParts): Promise<void>;
}

export class RefusalAggregator implements RefusalRecorder {
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
    this.#log.requests.noteAppend(refusal);
    // Read now, while the request is answered: a summary is appended after it was.
    const caller = refusal.caller_request_id ?? this.#log.requests.callerOf(refusal.request_id);
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
