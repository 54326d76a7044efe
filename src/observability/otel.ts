/**
 * OpenTelemetry export (issue 17): the SDK started from the standard `OTEL_*` environment
 * variables, or not at all.
 *
 * A signal (traces, metrics) is on when an OTLP endpoint is configured for it
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT`) or its
 * exporter is asked for (`OTEL_{TRACES,METRICS}_EXPORTER=otlp`, to the spec's default endpoint
 * http://localhost:4318), and not turned off (`…_EXPORTER=none`, `OTEL_SDK_DISABLED=true`).
 * Without any of them nothing is loaded: the SDK modules are imported only when a signal is on.
 *
 * Writ chooses what the spec leaves to the application: the exporter package from the protocol
 * (`http/protobuf`, the default, or `http/json`; `grpc` is refused at start), the export
 * interval (`OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_METRIC_EXPORT_TIMEOUT`) and `service.name`
 * `writ` unless the environment names it. The SDK reads the rest itself: endpoints, headers,
 * timeouts, compression and certificates (otlp-exporter-base), `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` (the resource's env detector), the sampler
 * (`OTEL_TRACES_SAMPLER[_ARG]`), batching (`OTEL_BSP_*`) and attribute limits.
 *
 * Export failures never reach an answer: the SDK reports them to its global error handler and
 * diagnostic logger, which print the first one and then at most one a minute.
 */
import type { Meter } from "@opentelemetry/api";
import type { RequestTracing } from "./tracing.ts";

export const TRACER_NAME = "writ";

/** The environment asks for something Writ cannot do (grpc, an unknown exporter). */
export class TelemetryConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TelemetryConfigError";
  }
}

export interface Telemetry {
  /** Set when traces are exported. */
  tracing?: RequestTracing;
  /** Set when metrics are exported. */
  meter?: Meter;
  /** What is exported where, for the start-up line, e.g. `traces (http/json) to http://…/v1/traces`. */
  description: string;
  /** Exports what is pending and stops; bounded so a dead collector cannot hold a shutdown. */
  shutdown(): Promise<void>;
}

type Signal = "TRACES" | "METRICS";
type Protocol = "http/protobuf" | "http/json";
type Env = Readonly<Record<string, string | undefined>>;

/** Longest wait for the last export at shutdown. */
const SHUTDOWN_LIMIT_MS = 5_000;

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
}

/** The protocol a signal is exported with, or undefined when the signal is off. */
export function signalProtocol(signal: Signal, env: Env = process.env): Protocol | undefined {
  const exporterVariable = `OTEL_${signal}_EXPORTER`;
  const exporter = value(env, exporterVariable)?.toLowerCase();
  if (exporter === "none") return undefined;
  if (exporter !== undefined && exporter !== "otlp") {
    throw new TelemetryConfigError(
      `${exporterVariable}=${exporter} is not supported: Writ exports with otlp (or none to turn it off)`,
    );
  }
  const endpoint =
    value(env, "OTEL_EXPORTER_OTLP_ENDPOINT") ?? value(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`);
  if (exporter === undefined && endpoint === undefined) return undefined;

  const specific = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const variable = value(env, specific) === undefined ? "OTEL_EXPORTER_OTLP_PROTOCOL" : specific;
  const protocol = value(env, variable) ?? "http/protobuf";
  if (protocol === "http/protobuf" || protocol === "http/json") return protocol;
  if (protocol === "grpc") {
    throw new TelemetryConfigError(
      `${variable}=grpc is not supported: set it to http/protobuf (the default) or http/json and point the endpoint at the collector's OTLP/HTTP port (4318)`,
    );
  }
  throw new TelemetryConfigError(`${variable}=${protocol} is not a protocol: use http/protobuf or http/json`);
}

function disabled(env: Env): boolean {
  return value(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true";
}

function milliseconds(env: Env, name: string, fallback: number): number {
  const text = value(env, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) {
    throw new TelemetryConfigError(`${name}=${text} must be a positive number of milliseconds`);
  }
  return n;
}

/**
 * Starts the SDK for the signals the environment turns on; undefined (and nothing loaded) when
 * none is. Throws TelemetryConfigError for a configuration Writ refuses.
 */
export async function startTelemetry(env: Env = process.env): Promise<Telemetry | undefined> {
  if (disabled(env)) return undefined;
  const traces = signalProtocol("TRACES", env);
  const metrics = signalProtocol("METRICS", env);
  if (traces === undefined && metrics === undefined) return undefined;
  const interval = milliseconds(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000);
  const timeout = Math.min(milliseconds(env, "OTEL_METRIC_EXPORT_TIMEOUT", 30_000), interval);

  await reportExportFailures();
  const resource = await writResource();
  const stops: Array<() => Promise<void>> = [];
  const described = (signal: Signal, protocol: Protocol) =>
    `${signal.toLowerCase()} (${protocol}) to ${exportUrl(signal, env)}`;
  const telemetry: Telemetry = {
    description: [
      ...(traces === undefined ? [] : [described("TRACES", traces)]),
      ...(metrics === undefined ? [] : [`${described("METRICS", metrics)} every ${interval / 1000} s`]),
    ].join(", "),
    shutdown: () => bounded(Promise.all(stops.map((stop) => stop())).then(() => undefined)),
  };
  if (traces !== undefined) {
    const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
    const exporter =
      traces === "http/json"
        ? new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter()
        : new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
    const provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
    telemetry.tracing = {
      tracer: provider.getTracer(TRACER_NAME),
      propagator: new W3CTraceContextPropagator(),
    };
    stops.push(() => provider.shutdown());
  }
  if (metrics !== undefined) {
    const { MeterProvider, PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
    const exporter =
      metrics === "http/json"
        ? new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter()
        : new (await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter();
    const provider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: interval,
          exportTimeoutMillis: timeout,
        }),
      ],
    });
    telemetry.meter = provider.getMeter(TRACER_NAME);
    stops.push(() => provider.shutdown());
  }
  return telemetry;
}

/** Where the exporter sends a signal, as otlp-exporter-base works it out (without credentials). */
function exportUrl(signal: Signal, env: Env): string {
  const generic = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const text =
    value(env, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`) ??
    `${(generic ?? "http://localhost:4318").replace(/\/$/, "")}/v1/${signal.toLowerCase()}`;
  try {
    const url = new URL(text);
    url.username = "";
    url.password = "";
    return url.href;
  } catch {
    return "an invalid URL (nothing will arrive)";
  }
}

/** `service.name` writ, overridden by OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. */
async function writResource() {
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = await import(
    "@opentelemetry/resources"
  );
  return defaultResource()
    .merge(resourceFromAttributes({ "service.name": "writ" }))
    .merge(detectResources({ detectors: [envDetector] }));
}

function bounded(work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      report(`telemetry: the last export did not finish within ${SHUTDOWN_LIMIT_MS} ms; stopped without it`);
      resolve();
    }, SHUTDOWN_LIMIT_MS);
    timer.unref();
  });
  return Promise.race([work.catch((error: unknown) => report(describe(error))), limit]).finally(() =>
    clearTimeout(timer),
  );
}

const REPORT_INTERVAL_MS = 60_000;
let lastReport = Number.NEGATIVE_INFINITY;
let suppressed = 0;

/** Prints an export problem: the first at once, then at most one a minute with a count of the rest. */
function report(message: string): void {
  const now = Date.now();
  if (now - lastReport < REPORT_INTERVAL_MS) {
    suppressed++;
    return;
  }
  const more = suppressed > 0 ? ` (${suppressed} more since the last report)` : "";
  lastReport = now;
  suppressed = 0;
  console.error(`writ: ${message}${more}; answers are not affected`);
}

function describe(error: unknown): string {
  return `telemetry export failed: ${error instanceof Error ? error.message : String(error)}`;
}

let reporting = false;

/** Routes the SDK's error handler and warnings to `report` (process-wide, set once). */
async function reportExportFailures(): Promise<void> {
  if (reporting) return;
  reporting = true;
  const [core, api] = await Promise.all([import("@opentelemetry/core"), import("@opentelemetry/api")]);
  core.setGlobalErrorHandler((error) => report(describe(error)));
  const warn = (message: string, ...args: unknown[]) =>
    report(
      `telemetry: ${[message, ...args.map((a) => (a instanceof Error ? a.message : String(a)))].join(" ")}`,
    );
  const quiet = () => {};
  api.diag.setLogger({ error: warn, warn, info: quiet, debug: quiet, verbose: quiet }, api.DiagLogLevel.WARN);
}
