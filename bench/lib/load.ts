/**
 * Load runs shared by the benchmarks: one autocannon run turned into the numbers the tables and
 * the JSON summaries print, and a wait until the process is idle again between runs.
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { moduleWorker } from "../../src/core/module-worker.ts";

/** What one load run measured. Latencies in milliseconds. */
export interface LoadResult {
  /** Mean requests per second (2xx or not) over the run. */
  rps: number;
  p50: number;
  p97_5: number;
  p99: number;
  p99_9: number;
  max: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Answers with a status outside 2xx. */
  non2xx: number;
  /** Requests answered in all. */
  requests: number;
}

/** An evenly paced run's result (`runPaced`). */
export interface PacedResult extends LoadResult {
  /**
   * How late the load generator itself sent requests after they were due (its timers fire on
   * whole milliseconds; `exactSends` waits out the last stretch while nothing is in flight),
   * median and p99 in ms: part of the latency counted from the due time,
   * none of it the server's.
   */
  sendDelayP50: number;
  sendDelayP99: number;
  /** The latency counted from when the generator sent each request instead (ms; info). */
  fromSendP50: number;
  fromSendP99: number;
}

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /**
   * Paces the run at this many requests per second in all (autocannon's `overallRate`). Note how
   * autocannon paces: each connection sends its share of the second's requests back to back, then
   * waits for the next second; the load is bursty within a second, not evenly spread.
   */
  rate?: number;
  /** autocannon's own worker threads (it aggregates their results in this thread); none by default. */
  workers?: number;
}

/** One autocannon run in this process. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "POST",
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections,
    duration: options.seconds,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
    ...(options.rate === undefined
      ? {}
      : {
          overallRate: Math.max(1, Math.round(options.rate)),
          // autocannon's correction for paced runs assumes a 1 ms interval between requests of a
          // connection (ceil(1 / rate)); it adds made-up samples. Report the latencies measured.
          ignoreCoordinatedOmission: true,
        }),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p97_5: result.latency.p97_5,
    p99: result.latency.p99,
    p99_9: result.latency.p99_9,
    max: result.latency.max,
    errors: result.errors,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}

/** The value below which a share `q` (0…1) of the sorted `values` falls. */
function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export type LatencyStats = Pick<LoadResult, "p50" | "p97_5" | "p99" | "p99_9" | "max">;

/** The percentiles of latencies measured by hand (milliseconds), to 0.01 ms, as a load run reports them. */
export function latencyStats(latencies: ArrayLike<number>): LatencyStats {
  const sorted = Float64Array.from(latencies).sort();
  const at = (q: number) => Math.round(percentile(sorted, q) * 100) / 100;
  return { p50: at(0.5), p97_5: at(0.975), p99: at(0.99), p99_9: at(0.999), max: at(1) };
}

export interface PacedOptions extends LoadOptions {
  rate: number;
  /**
   * Send each request at its due time to the tens of microseconds instead of on the timer's
   * whole milliseconds (on average half of one late): the last stretch before a request is due
   * is waited out blocking this thread while no request is in flight. Only for a thread that
   * runs nothing but this client (bench/lib/load-worker.ts), never on a server's event loop.
   */
  exactSends?: boolean;
}

/** How early the exact sender's timer is set to fire (a timer may fire up to 1 ms late). */
const EARLY_MS = 2;
/** What the exact sender blocks on (nobody wakes it: the wait times out). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * An evenly paced (open-loop) run: request i leaves at start + i / rate whatever happened to the
 * ones before, over at most `connections` keep-alive connections (node:http), and its latency is
 * counted from the time it was due, so that waiting for a free connection counts too (no
 * coordinated omission). Unlike autocannon's `overallRate`, which sends each second's share in a
 * burst, this is the load of callers arriving independently at `rate` per second.
 */
export async function runPaced(options: PacedOptions): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const url = new URL(options.url);
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) headers["content-length"] = Buffer.byteLength(options.body);
  const interval = 1000 / options.rate;
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const latencies = new Float64Array(total);
  const sendDelays = new Float64Array(total);
  const fromSend = new Float64Array(total);
  let sentCount = 0;
  let answered = 0;
  let errors = 0;
  let non2xx = 0;

  const send = (due: number) =>
    new Promise<void>((done) => {
      const sentAt = performance.now();
      sendDelays[sentCount++] = sentAt - due;
      const sent = request(
        url,
        { method: options.method ?? "POST", headers, agent, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on("end", () => {
            const now = performance.now();
            fromSend[answered] = now - sentAt;
            latencies[answered++] = now - due;
            if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode >= 300) non2xx++;
            done();
          });
          res.on("error", () => {
            errors++;
            done();
          });
        },
      );
      sent.on("timeout", () => sent.destroy(new Error("timeout")));
      sent.on("error", () => {
        errors++;
        done();
      });
      sent.end(options.body);
    });

  const start = performance.now();
  let end = start;
  await new Promise<void>((finished) => {
    let scheduled = 0;
    let inFlight = 0;
    const tick = () => {
      for (;;) {
        const now = performance.now();
        while (scheduled < total && start + scheduled * interval <= now) {
          inFlight++;
          void send(start + scheduled * interval).then(() => {
            inFlight--;
            if (scheduled === total && inFlight === 0) {
              end = performance.now();
              finished();
            }
          });
          scheduled++;
        }
        if (scheduled === total) return;
        const wait = start + scheduled * interval - performance.now();
        // A timer fires on the loop's whole milliseconds, up to one late. The exact sender sets
        // it to fire early and, with nothing in flight (no answer could arrive meanwhile), waits
        // out the rest blocking, to the tens of microseconds.
        if (options.exactSends && inFlight === 0 && wait <= EARLY_MS) {
          if (wait > 0) Atomics.wait(pause, 0, 0, wait);
          continue;
        }
        setTimeout(tick, options.exactSends && wait > EARLY_MS ? wait - EARLY_MS : Math.max(0, wait));
        return;
      }
    };
    tick();
  });
  agent.destroy();
  const delays = latencyStats(sendDelays.subarray(0, sentCount));
  const sentToAnswered = latencyStats(fromSend.subarray(0, answered));

  return {
    rps: answered / ((end - start) / 1000),
    ...latencyStats(latencies.subarray(0, answered)),
    sendDelayP50: delays.p50,
    sendDelayP99: delays.p99,
    fromSendP50: sentToAnswered.p50,
    fromSendP99: sentToAnswered.p99,
    errors,
    non2xx,
    requests: answered,
  };
}

/**
 * Waits until this process's event loop has been nearly idle (utilization under `threshold`) for
 * one `windowMs` window, so that the next run does not start while requests left over from the
 * last one (autocannon stops without waiting for answers in flight) are still being served.
 * Gives up after `timeoutMs`; returns whether the process became idle.
 */
export async function waitUntilIdle({
  threshold = 0.05,
  windowMs = 200,
  timeoutMs = 10_000,
}: {
  threshold?: number;
  windowMs?: number;
  timeoutMs?: number;
} = {}): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const start = performance.eventLoopUtilization();
    await sleep(windowMs);
    if (performance.eventLoopUtilization(start).utilization < threshold) return true;
  }
  return false;
}

/** Where the load generator runs: on the server's own event loop, or in a worker thread. */
export type ClientPlacement = "inline" | "thread";

/** What the parent asks of bench/lib/load-worker.ts. */
export interface PacedRequest {
  options: PacedOptions;
}

export interface LoadClient {
  readonly placement: ClientPlacement;
  load(options: LoadOptions): Promise<LoadResult>;
  paced(options: LoadOptions & { rate: number }): Promise<PacedResult>;
  close(): Promise<void>;
}

/**
 * The load generator, `inline` (this thread: its CPU time counts against the server's event
 * loop, as when issue 16's baseline was measured) or in a worker `thread` (its own event loop;
 * the server's loop serves requests only, as with a separate client, but on the same cores).
 */
export function loadClient(placement: ClientPlacement): LoadClient {
  if (placement === "inline") {
    return { placement, load: runLoad, paced: runPaced, close: async () => undefined };
  }
  const worker = moduleWorker(new URL("./load-worker.ts", import.meta.url));
  worker.unref();
  const ask = (message: PacedRequest) =>
    new Promise<PacedResult>((resolve, reject) => {
      worker.ref();
      worker.once("message", (answer: { result?: PacedResult; error?: string }) => {
        worker.unref();
        if (answer.result) resolve(answer.result);
        else reject(new Error(`the load worker failed: ${answer.error ?? "no answer"}`));
      });
      worker.postMessage(message);
    });
  return {
    placement,
    // autocannon runs its connections in a worker of its own and aggregates here.
    load: (options) => runLoad({ ...options, workers: 1 }),
    // The worker runs nothing else: it may block while it waits to send a request on time.
    paced: (options) => ask({ options: { ...options, exactSends: true } }),
    close: async () => {
      await worker.terminate();
    },
  };
}
