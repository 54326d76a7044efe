/**
 * A loopback OTLP/HTTP receiver (node:http on 127.0.0.1, port 0) that keeps every export it
 * gets, and readers for what it got: spans from OTLP/JSON (zod) and from OTLP/protobuf (a small
 * wire-format reader for the fields the tests look at: otlp-transformer serializes protobuf but
 * exposes no decoder), metrics from OTLP/JSON.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

export interface OtlpExport {
  /** `/v1/traces` or `/v1/metrics`. */
  path: string;
  contentType: string;
  /** The request's headers (names in lower case). */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface OtlpReceiver {
  /** e.g. http://127.0.0.1:41234, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  exports: OtlpExport[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const contentType = req.headers["content-type"] ?? "";
      exports.push({ path: req.url ?? "", contentType, headers: req.headers, body: Buffer.concat(chunks) });
      // An empty Export…ServiceResponse: `{}` in JSON, zero bytes in protobuf.
      const json = contentType.startsWith("application/json");
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      res.end(json ? "{}" : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = z.custom<AddressInfo>((a) => typeof a === "object" && a !== null).parse(server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** When the span ended, in ns since the epoch (0 when not read). */
  endNs: bigint;
}

const anyValueSchema = z.object({
  stringValue: z.string().optional(),
  boolValue: z.boolean().optional(),
  intValue: z.union([z.string(), z.number()]).optional(),
  doubleValue: z.number().optional(),
});
const keyValueSchema = z.object({ key: z.string(), value: anyValueSchema });

function attributesOf(list: ReadonlyArray<z.infer<typeof keyValueSchema>>): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) out[key] = typeof v === "string" && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

const jsonSpanSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
  name: z.string(),
  kind: z.number(),
  attributes: z.array(keyValueSchema).default([]),
  status: z.object({ code: z.number().optional() }).optional(),
  endTimeUnixNano: z.union([z.string(), z.number()]),
});
const jsonTracesSchema = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes: z.array(keyValueSchema).default([]) }).optional(),
      scopeSpans: z.array(z.object({ spans: z.array(jsonSpanSchema).default([]) })),
    }),
  ),
});

/** The resource attributes and spans of OTLP/JSON trace exports. */
export function jsonSpans(exports: readonly OtlpExport[]): {
  resources: Array<Record<string, AttributeValue>>;
  spans: ReceivedSpan[];
} {
  const resources: Array<Record<string, AttributeValue>> = [];
  const spans: ReceivedSpan[] = [];
  for (const e of exports.filter((x) => x.path === "/v1/traces")) {
    for (const rs of jsonTracesSchema.parse(JSON.parse(e.body.toString("utf8"))).resourceSpans) {
      resources.push(attributesOf(rs.resource?.attributes ?? []));
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind,
            attributes: attributesOf(s.attributes),
            statusCode: s.status?.code ?? 0,
            endNs: BigInt(s.endTimeUnixNano),
          });
        }
      }
    }
  }
  return { resources, spans };
}

// ----------------------------------------------------------------------------- protobuf

interface Field {
  no: number;
  /** A varint or fixed64 field's value. */
  int: bigint;
  /** A length-delimited field's bytes. */
  bytes: Uint8Array;
}

function* fields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[pos++];
      if (b === undefined) throw new Error("truncated varint");
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  const empty = new Uint8Array();
  while (pos < buf.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    switch (tag & 7) {
      case 0:
        yield { no, int: varint(), bytes: empty };
        break;
      case 1:
        yield { no, int: Buffer.from(buf.subarray(pos, pos + 8)).readBigUInt64LE(), bytes: empty };
        pos += 8;
        break;
      case 2: {
        const length = Number(varint());
        yield { no, int: 0n, bytes: buf.subarray(pos, pos + length) };
        pos += length;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`unexpected wire type ${tag & 7}`);
    }
  }
}

const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** KeyValue { 1 key; 2 AnyValue { 1 string, 2 bool, 3 int, 4 double } }. */
function protobufAttribute(b: Uint8Array): [string, AttributeValue] | undefined {
  let key = "";
  let value: AttributeValue | undefined;
  for (const f of fields(b)) {
    if (f.no === 1) key = text(f.bytes);
    if (f.no === 2) {
      for (const v of fields(f.bytes)) {
        if (v.no === 1) value = text(v.bytes);
        if (v.no === 2) value = v.int !== 0n;
        if (v.no === 3) value = Number(v.int);
      }
    }
  }
  return value === undefined ? undefined : [key, value];
}

/**
 * The spans of OTLP/protobuf trace exports: ExportTraceServiceRequest { 1 ResourceSpans
 * { 2 ScopeSpans { 2 Span { 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind,
 * 9 attributes, 15 Status { 3 code } } } } }.
 */
export function protobufSpans(exports: readonly OtlpExport[]): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const e of exports.filter((x) => x.path === "/v1/traces")) {
    for (const rs of fields(e.body)) {
      if (rs.no !== 1) continue;
      for (const ss of fields(rs.bytes)) {
        if (ss.no !== 2) continue;
        for (const sp of fields(ss.bytes)) {
          if (sp.no !== 2) continue;
          const span: ReceivedSpan = {
            traceId: "",
            spanId: "",
            parentSpanId: "",
            name: "",
            kind: 0,
            attributes: {},
            statusCode: 0,
            endNs: 0n,
          };
          for (const f of fields(sp.bytes)) {
            if (f.no === 1) span.traceId = hex(f.bytes);
            else if (f.no === 2) span.spanId = hex(f.bytes);
            else if (f.no === 4) span.parentSpanId = hex(f.bytes);
            else if (f.no === 5) span.name = text(f.bytes);
            else if (f.no === 6) span.kind = Number(f.int);
            else if (f.no === 9) {
              const a = protobufAttribute(f.bytes);
              if (a) span.attributes[a[0]] = a[1];
            } else if (f.no === 15) {
              for (const s of fields(f.bytes)) if (s.no === 3) span.statusCode = Number(s.int);
            }
          }
          spans.push(span);
        }
      }
    }
  }
  return spans;
}

// ----------------------------------------------------------------------------- metrics

const numberPointSchema = z.object({
  attributes: z.array(keyValueSchema).default([]),
  asInt: z.union([z.string(), z.number()]).optional(),
  asDouble: z.number().optional(),
});
const histogramPointSchema = z.object({
  attributes: z.array(keyValueSchema).default([]),
  count: z.union([z.string(), z.number()]),
  explicitBounds: z.array(z.number()).default([]),
});
const jsonMetricsSchema = z.object({
  resourceMetrics: z.array(
    z.object({
      scopeMetrics: z.array(
        z.object({
          metrics: z.array(
            z.object({
              name: z.string(),
              sum: z.object({ dataPoints: z.array(numberPointSchema) }).optional(),
              gauge: z.object({ dataPoints: z.array(numberPointSchema) }).optional(),
              histogram: z.object({ dataPoints: z.array(histogramPointSchema) }).optional(),
            }),
          ),
        }),
      ),
    }),
  ),
});

export interface ReceivedPoint {
  metric: string;
  attributes: Record<string, AttributeValue>;
  /** A sum's or gauge's value, a histogram's count. */
  value: number;
  /** A histogram's bucket bounds. */
  bounds?: number[];
}

/** The data points of OTLP/JSON metric exports, in the order received. */
export function jsonMetricPoints(exports: readonly OtlpExport[]): ReceivedPoint[] {
  const points: ReceivedPoint[] = [];
  for (const e of exports.filter((x) => x.path === "/v1/metrics")) {
    for (const rm of jsonMetricsSchema.parse(JSON.parse(e.body.toString("utf8"))).resourceMetrics) {
      for (const sm of rm.scopeMetrics) {
        for (const m of sm.metrics) {
          for (const p of [...(m.sum?.dataPoints ?? []), ...(m.gauge?.dataPoints ?? [])]) {
            points.push({
              metric: m.name,
              attributes: attributesOf(p.attributes),
              value: Number(p.asInt ?? p.asDouble ?? Number.NaN),
            });
          }
          for (const p of m.histogram?.dataPoints ?? []) {
            points.push({
              metric: m.name,
              attributes: attributesOf(p.attributes),
              value: Number(p.count),
              bounds: p.explicitBounds,
            });
          }
        }
      }
    }
  }
  return points;
}
