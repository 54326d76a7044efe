/**
 * The gateway's Prometheus metrics, kept by prom-client in a registry of their own (never the
 * process-wide default, so that gateways in one process do not share series), rendered in the
 * text exposition format (version 0.0.4) for `/metrics`.
 *
 * The gateway's code records through the small `Counter`/`Gauge`/`Histogram` wrappers below,
 * which keep Writ's argument order (`observe(value, labels)`, `set(value, labels)`) and declare
 * each metric's label names once. Metrics read from their owners at scrape time (the token cache,
 * the upstream MCP servers: `SampledMetric`) are rendered beside them from a registry made per
 * scrape.
 *
 * With OpenTelemetry metrics on (src/observability/otel.ts), `mirror(meter)` exports the same
 * series under the same names and labels: counters and gauges as observable instruments read at
 * each export (nothing added to `inc`), histograms recorded as they are observed, same buckets.
 */
import type { Meter, Histogram as OtelHistogram } from "@opentelemetry/api";
import * as prom from "prom-client";

type Labels = Record<string, string>;

/** A counter as the code that counts sees it. */
export interface CounterMetric {
  inc(labels?: Labels, by?: number): void;
}

/** A gauge as the code that sets it sees it. */
export interface GaugeMetric {
  set(value: number, labels?: Labels): void;
}

/** A histogram as the code that observes sees it. */
export interface HistogramMetric {
  observe(value: number, labels?: Labels): void;
}

/** A counter: `inc(labels, by)`. */
class Counter implements CounterMetric {
  readonly metric: prom.Counter;
  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    registry: prom.Registry,
  ) {
    this.metric = new prom.Counter({ name, help, labelNames, registers: [registry] });
  }

  inc(labels: Labels = {}, by = 1): void {
    this.metric.inc(labels, by);
  }

  /** Read at each export: an observable counter of the same series. */
  mirror(meter: Meter): void {
    mirrorSamples(meter, [{ name: this.name, help: this.help, type: "counter", rows: rowsOf(this.metric) }]);
  }
}

/** A value that goes up and down, set by its owner: `set(value, labels)`. */
class Gauge implements GaugeMetric {
  readonly metric: prom.Gauge;
  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    registry: prom.Registry,
  ) {
    this.metric = new prom.Gauge({ name, help, labelNames, registers: [registry] });
  }

  set(value: number, labels: Labels = {}): void {
    this.metric.set(labels, value);
  }

  mirror(meter: Meter): void {
    mirrorSamples(meter, [{ name: this.name, help: this.help, type: "gauge", rows: rowsOf(this.metric) }]);
  }
}

class Histogram implements HistogramMetric {
  readonly metric: prom.Histogram;
  private otel: OtelHistogram | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    labelNames: readonly string[],
    registry: prom.Registry,
  ) {
    this.metric = new prom.Histogram({
      name,
      help,
      labelNames,
      buckets: [...buckets],
      registers: [registry],
    });
  }

  observe(value: number, labels: Labels = {}): void {
    this.metric.observe(labels, value);
    this.otel?.record(value, labels);
  }

  mirror(meter: Meter): void {
    this.otel = meter.createHistogram(this.name, {
      description: this.help,
      ...(this.name.endsWith("_seconds") ? { unit: "s" } : {}),
      advice: { explicitBucketBoundaries: [...this.buckets] },
    });
  }
}

/** A prom-client counter's or gauge's series as rows (read asynchronously, as prom-client reads). */
function rowsOf(metric: prom.Counter | prom.Gauge): () => Promise<Array<[Labels, number]>> {
  return async () =>
    (await metric.get()).values.map(({ labels, value }) => [
      Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)])),
      value,
    ]);
}

type Rows = ReadonlyArray<readonly [Labels, number]>;

/** A metric whose values are read from its owner when scraped or exported (`rows`). */
export interface SampledMetric {
  name: string;
  help: string;
  type: "counter" | "gauge";
  rows(): Rows | Promise<Rows>;
}

/** The same sampled metrics through OpenTelemetry: observable instruments read at each export. */
export function mirrorSamples(meter: Meter, metrics: readonly SampledMetric[]): void {
  for (const m of metrics) {
    const options = { description: m.help };
    const instrument =
      m.type === "counter"
        ? meter.createObservableCounter(m.name, options)
        : meter.createObservableGauge(m.name, options);
    instrument.addCallback(async (result) => {
      for (const [labels, value] of await m.rows()) result.observe(value, labels);
    });
  }
}

/**
 * Sampled metrics read now, in a registry made for this scrape: a counter's total is its one
 * increment from zero, a gauge is set.
 */
async function sampledRegistry(samples: readonly SampledMetric[]): Promise<prom.Registry> {
  const registry = new prom.Registry();
  for (const sample of samples) {
    const rows = await sample.rows();
    const options = {
      name: sample.name,
      help: sample.help,
      labelNames: [...new Set(rows.flatMap(([labels]) => Object.keys(labels)))],
      registers: [registry],
    };
    if (sample.type === "counter") {
      const counter = new prom.Counter(options);
      for (const [labels, value] of rows) counter.inc(labels, value);
    } else {
      const gauge = new prom.Gauge(options);
      for (const [labels, value] of rows) gauge.set(labels, value);
    }
  }
  return registry;
}

/** The gateway's metrics as its parts record them (`Gateway.metrics`); `GatewayMetrics` says what each is. */
export interface MetricsRecorder {
  readonly decisions: CounterMetric;
  readonly decisionSeconds: HistogramMetric;
  readonly policyFailures: CounterMetric;
  readonly policyReloads: CounterMetric;
  readonly dispatches: CounterMetric;
  readonly logShipped: CounterMetric;
  readonly logShipFailures: CounterMetric;
  readonly logShipLag: GaugeMetric;
  readonly limitCharged: CounterMetric;
  readonly limitRefusals: CounterMetric;
  readonly shadowDecisions: CounterMetric;
  readonly shadowDropped: CounterMetric;
  readonly groupWaiting: GaugeMetric;
  readonly groupRunning: GaugeMetric;
  readonly groupWaits: CounterMetric;
  readonly groupWaitSeconds: HistogramMetric;
  readonly scheduledCalls: CounterMetric;
  readonly concurrentCalls: HistogramMetric;
  /** The Prometheus text of these metrics, then of `samples` read now. */
  render(samples?: readonly SampledMetric[]): Promise<string>;
}

/** The gateway's metrics. */
export class GatewayMetrics implements MetricsRecorder {
  readonly registry = new prom.Registry();
  /** Every metric below, in the order declared (what `mirror` exports). */
  readonly #all: Array<Counter | Gauge | Histogram> = [];

  readonly decisions = this.#counter(
    "writ_decisions_total",
    "Decisions made, by outcome (allow, deny, require_approval, allow_with_conditions, error).",
    ["decision"],
  );
  readonly decisionSeconds = this.#histogram(
    "writ_decision_duration_seconds",
    "Time from receiving a proposal to answering it, per call.",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    [],
  );
  readonly policyFailures = this.#counter(
    "writ_policy_failures_total",
    "Policy evaluations that gave no usable decision, by reason.",
    ["reason"],
  );
  readonly policyReloads = this.#counter(
    "writ_policy_reloads_total",
    "Policy reloads, by result (ok, failed).",
    ["result"],
  );

  readonly dispatches = this.#counter(
    "writ_dispatches_total",
    "Calls Writ ran on a backend, by backend kind (inprocess, http, mcp) and result (ok, or the error category).",
    ["backend", "result"],
  );

  readonly logShipped = this.#counter(
    "writ_decision_log_shipped_total",
    "Decision-log entries a decision-log service acknowledged (decision_log.ship).",
    [],
  );
  readonly logShipFailures = this.#counter(
    "writ_decision_log_ship_failures_total",
    "Failed decision-log shipping attempts, by reason (status, network, timeout, credentials, store); each is retried.",
    ["reason"],
  );
  readonly logShipLag = this.#gauge(
    "writ_decision_log_ship_lag_entries",
    "Decision-log entries not yet acknowledged by the decision-log service.",
    [],
  );

  readonly limitCharged = this.#counter(
    "writ_limit_charged_total",
    "Calls charged to a limit (limits:), by limit: the calls its buckets let through.",
    ["limit"],
  );
  readonly limitRefusals = this.#counter(
    "writ_limit_refusals_total",
    "Calls refused because a limit (limits:) had no room, by limit.",
    ["limit"],
  );
  readonly shadowDecisions = this.#counter(
    "writ_shadow_decisions_total",
    "Calls a shadow policy (policy.shadow) decided beside the live one, by outcome (agree, disagree, failed: it could not decide).",
    ["outcome"],
  );
  readonly shadowDropped = this.#counter(
    "writ_shadow_dropped_total",
    "Calls the shadow policy skipped because its queue was full (the live answer is never held up by it).",
    [],
  );
  readonly groupWaiting = this.#gauge(
    "writ_concurrency_group_waiting",
    "Calls of a concurrency group waiting for their turn in this instance, by group.",
    ["group"],
  );
  readonly groupRunning = this.#gauge(
    "writ_concurrency_group_running",
    "Calls of a concurrency group running in this instance (0 or 1), by group.",
    ["group"],
  );
  readonly groupWaits = this.#counter(
    "writ_concurrency_group_waits_total",
    "Calls that found their concurrency group busy and waited, by group and result (ran, timed_out, cancelled).",
    ["group", "result"],
  );
  readonly groupWaitSeconds = this.#histogram(
    "writ_concurrency_group_wait_seconds",
    "Time a call of a concurrency group waited for its turn (0 when the group was free), by group.",
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
    ["group"],
  );
  readonly scheduledCalls = this.#counter(
    "writ_scheduled_calls_total",
    "Calls of proposals with several calls, by schedule: concurrent (read-only, run beside each other) or ordered (side effects, run alone in order).",
    ["schedule"],
  );
  readonly concurrentCalls = this.#histogram(
    "writ_proposal_concurrent_calls",
    "The most calls of one proposal (with several calls) that ran at the same time.",
    [1, 2, 3, 4, 6, 8, 16, 32],
    [],
  );

  #counter(name: string, help: string, labelNames: readonly string[]): Counter {
    return this.#add(new Counter(name, help, labelNames, this.registry));
  }

  #gauge(name: string, help: string, labelNames: readonly string[]): Gauge {
    return this.#add(new Gauge(name, help, labelNames, this.registry));
  }

  #histogram(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly string[],
  ): Histogram {
    return this.#add(new Histogram(name, help, buckets, labelNames, this.registry));
  }

  #add<M extends Counter | Gauge | Histogram>(metric: M): M {
    this.#all.push(metric);
    return metric;
  }

  /** The Prometheus text of these metrics, then of `samples` read now. */
  async render(samples: readonly SampledMetric[] = []): Promise<string> {
    const own = await this.registry.metrics();
    if (samples.length === 0) return own;
    return own + (await (await sampledRegistry(samples)).metrics());
  }

  /** Exports these metrics through OpenTelemetry too, from now on (counters with their totals). */
  mirror(meter: Meter): void {
    for (const m of this.#all) m.mirror(meter);
  }
}
