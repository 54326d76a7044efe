/**
 * Prometheus metrics in the text exposition format (version 0.0.4): counters and histograms with
 * labels, enough for `/metrics` without a client library.
 *
 * With OpenTelemetry metrics on (src/observability/otel.ts), `mirror(meter)` exports the same
 * series under the same names and labels: counters as observable counters read at each export
 * (nothing added to `inc`), histograms recorded as they are observed, with the same buckets.
 */
import type { Meter, Histogram as OtelHistogram } from "@opentelemetry/api";

type Labels = Record<string, string>;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map(
      (k) => `${k}="${labels[k]!.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")}"`,
    )
    .join(",");
}

class Counter {
  protected readonly values = new Map<string, { labels: Labels; value: number }>();
  protected readonly type: "counter" | "gauge" = "counter";
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    const series = this.values.get(key);
    if (series) series.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const [key, { value }] of [...this.values].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`${this.name}${key ? `{${key}}` : ""} ${value}`);
    }
    return lines;
  }

  /** Read at each export: an observable counter (or gauge) of the same series. */
  mirror(meter: Meter): void {
    const rows = (): Array<[Labels, number]> => [...this.values.values()].map((s) => [s.labels, s.value]);
    mirrorSamples(meter, [{ name: this.name, help: this.help, type: this.type, rows }]);
  }
}

/** A value that goes up and down, set by its owner. */
class Gauge extends Counter {
  protected override readonly type = "gauge";

  set(value: number, labels: Labels = {}): void {
    this.values.set(labelKey(labels), { labels: { ...labels }, value });
  }
}

class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  private otel: OtelHistogram | undefined;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  observe(value: number, labels: Labels = {}): void {
    const key = labelKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
    this.otel?.record(value, labels);
  }

  mirror(meter: Meter): void {
    this.otel = meter.createHistogram(this.name, {
      description: this.help,
      ...(this.name.endsWith("_seconds") ? { unit: "s" } : {}),
      advice: { explicitBucketBoundaries: [...this.buckets] },
    });
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, s] of [...this.series].sort(([a], [b]) => a.localeCompare(b))) {
      const prefix = key ? `${key},` : "";
      for (const [i, b] of this.buckets.entries())
        lines.push(`${this.name}_bucket{${prefix}le="${b}"} ${s.counts[i]}`);
      lines.push(`${this.name}_bucket{${prefix}le="+Inf"} ${s.count}`);
      lines.push(`${this.name}_sum${key ? `{${key}}` : ""} ${s.sum}`);
      lines.push(`${this.name}_count${key ? `{${key}}` : ""} ${s.count}`);
    }
    return lines;
  }
}

/** A metric whose values are read from its owner when scraped or exported (`rows`). */
export interface SampledMetric {
  name: string;
  help: string;
  type: "counter" | "gauge";
  rows(): ReadonlyArray<readonly [Labels, number]>;
}

/** The same sampled metrics through OpenTelemetry: observable instruments read at each export. */
export function mirrorSamples(meter: Meter, metrics: readonly SampledMetric[]): void {
  for (const m of metrics) {
    const options = { description: m.help };
    const instrument =
      m.type === "counter"
        ? meter.createObservableCounter(m.name, options)
        : meter.createObservableGauge(m.name, options);
    instrument.addCallback((result) => {
      for (const [labels, value] of m.rows()) result.observe(value, labels);
    });
  }
}

/**
 * Lines for values read at render time from elsewhere (a cache's counters, connection states):
 * `rows` are each series' labels and value.
 */
export function sampleLines(
  name: string,
  help: string,
  type: "counter" | "gauge",
  rows: ReadonlyArray<readonly [Labels, number]>,
): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  for (const [labels, value] of rows) {
    const key = labelKey(labels);
    lines.push(`${name}${key ? `{${key}}` : ""} ${value}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The gateway's metrics. */
export class GatewayMetrics {
  readonly decisions = new Counter(
    "writ_decisions_total",
    "Decisions made, by outcome (allow, deny, require_approval, allow_with_conditions, error).",
  );
  readonly decisionSeconds = new Histogram(
    "writ_decision_duration_seconds",
    "Time from receiving a proposal to answering it, per call.",
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  );
  readonly policyFailures = new Counter(
    "writ_policy_failures_total",
    "Policy evaluations that gave no usable decision, by reason.",
  );
  readonly policyReloads = new Counter(
    "writ_policy_reloads_total",
    "Policy reloads, by result (ok, failed).",
  );

  readonly dispatches = new Counter(
    "writ_dispatches_total",
    "Calls Writ ran on a backend, by backend kind (inprocess, http, mcp) and result (ok, or the error category).",
  );

  readonly logShipped = new Counter(
    "writ_decision_log_shipped_total",
    "Decision-log entries a decision-log service acknowledged (decision_log.ship).",
  );
  readonly logShipFailures = new Counter(
    "writ_decision_log_ship_failures_total",
    "Failed decision-log shipping attempts, by reason (status, network, timeout, credentials, store); each is retried.",
  );
  readonly logShipLag = new Gauge(
    "writ_decision_log_ship_lag_entries",
    "Decision-log entries not yet acknowledged by the decision-log service.",
  );

  readonly limitCharged = new Counter(
    "writ_limit_charged_total",
    "Calls charged to a limit (limits:), by limit: the calls its buckets let through.",
  );
  readonly limitRefusals = new Counter(
    "writ_limit_refusals_total",
    "Calls refused because a limit (limits:) had no room, by limit.",
  );
  readonly shadowDecisions = new Counter(
    "writ_shadow_decisions_total",
    "Calls a shadow policy (policy.shadow) decided beside the live one, by outcome (agree, disagree, failed: it could not decide).",
  );
  readonly shadowDropped = new Counter(
    "writ_shadow_dropped_total",
    "Calls the shadow policy skipped because its queue was full (the live answer is never held up by it).",
  );
  readonly groupWaiting = new Gauge(
    "writ_concurrency_group_waiting",
    "Calls of a concurrency group waiting for their turn in this instance, by group.",
  );
  readonly groupRunning = new Gauge(
    "writ_concurrency_group_running",
    "Calls of a concurrency group running in this instance (0 or 1), by group.",
  );
  readonly groupWaits = new Counter(
    "writ_concurrency_group_waits_total",
    "Calls that found their concurrency group busy and waited, by group and result (ran, timed_out, cancelled).",
  );
  readonly groupWaitSeconds = new Histogram(
    "writ_concurrency_group_wait_seconds",
    "Time a call of a concurrency group waited for its turn (0 when the group was free), by group.",
    [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
  );
  readonly scheduledCalls = new Counter(
    "writ_scheduled_calls_total",
    "Calls of proposals with several calls, by schedule: concurrent (read-only, run beside each other) or ordered (side effects, run alone in order).",
  );
  readonly concurrentCalls = new Histogram(
    "writ_proposal_concurrent_calls",
    "The most calls of one proposal (with several calls) that ran at the same time.",
    [1, 2, 3, 4, 6, 8, 16, 32],
  );

  private all(): Array<Counter | Histogram> {
    return [
      this.decisions,
      this.decisionSeconds,
      this.policyFailures,
      this.policyReloads,
      this.dispatches,
      this.logShipped,
      this.logShipFailures,
      this.logShipLag,
      this.limitCharged,
      this.limitRefusals,
      this.shadowDecisions,
      this.shadowDropped,
      this.groupWaiting,
      this.groupRunning,
      this.groupWaits,
      this.groupWaitSeconds,
      this.scheduledCalls,
      this.concurrentCalls,
    ];
  }

  render(): string {
    return `${this.all()
      .flatMap((m) => m.render())
      .join("\n")}\n`;
  }

  /** Exports these metrics through OpenTelemetry too, from now on (counters with their totals). */
  mirror(meter: Meter): void {
    for (const m of this.all()) m.mirror(meter);
  }
}
