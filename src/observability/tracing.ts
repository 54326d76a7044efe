/**
 * Spans of a request and of its pipeline stages (issue 17), through the OpenTelemetry API.
 *
 * The request's span and its tracer travel with the request in an AsyncLocalStorage that only
 * the HTTP entrance (`requestSpan`, installed when telemetry is on) enters. Everything else asks
 * `stage()`, which runs the stage as is when no request is traced: with telemetry off the hot
 * path pays one counter check and no span, no context, no SDK.
 *
 * Attributes name the decision, never its content: decision, action, policy revision, decision
 * id, tenant. Argument values, tokens and subjects' claims never become attributes. A stage that
 * throws sets its span's status to ERROR with the error's code only (a message can quote input).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { WritError } from "../core/errors.ts";

/** The pipeline's stages, named as in src/pipeline/index.ts. */
export type StageName =
  | "intake"
  | "normalize"
  | "identity"
  | "resource"
  | "decide"
  | "approval"
  | "grant"
  | "log"
  | "dispatch"
  | "result";

/** What a traced gateway's requests are traced with (src/observability/otel.ts makes it). */
export interface RequestTracing {
  tracer: Tracer;
  /** W3C trace context, in from callers and out to backends. */
  propagator: TextMapPropagator;
}

interface Scope extends RequestTracing {
  /** The context stages start their spans in (the request's span, or the running stage's). */
  context: Context;
  request: Span;
}

const scopes = new AsyncLocalStorage<Scope>();
/** Gateways in this process with tracing on; 0 keeps `stage()` to one comparison. */
let tracingGateways = 0;

/** Counts a gateway whose requests are traced; the returned function undoes it. */
export function enableTracing(): () => void {
  tracingGateways++;
  let done = false;
  return () => {
    if (!done) tracingGateways--;
    done = true;
  };
}

const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

const recordGetter: TextMapGetter<Readonly<Record<string, string>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (Object.hasOwn(carrier, key) ? carrier[key] : undefined),
};

const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The caller's W3C trace context (`traceparent`, `tracestate`), or none. */
export function extractTraceContext(tracing: RequestTracing, headers: Headers): Context {
  return tracing.propagator.extract(ROOT_CONTEXT, headers, headerGetter);
}

/**
 * Runs `fn` inside a server span for one HTTP request and returns the span, still open, for the
 * caller to describe the answer and end it; a throw fails and ends it.
 */
export async function requestSpan<T>(
  tracing: RequestTracing,
  name: string,
  parent: Context,
  attributes: Attributes,
  fn: () => Promise<T>,
): Promise<{ value: T; span: Span }> {
  const span = tracing.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const scope: Scope = { ...tracing, context: trace.setSpan(parent, span), request: span };
  try {
    return { value: await scopes.run(scope, fn), span };
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
}

/**
 * Runs `fn` under the W3C trace context a message carries itself (an MCP 2026-07-28 request's
 * `_meta` `traceparent` and `tracestate`): a server span named `name`, a child of that context and
 * linked to the HTTP request's span, is the parent of the stages `fn` runs. When no request is
 * traced, or `carrier` has no valid `traceparent`, `fn` runs as it is (under the request's span).
 */
export async function withMessageTrace<T>(
  name: string,
  carrier: Readonly<Record<string, string>>,
  fn: () => Promise<T>,
): Promise<T> {
  if (tracingGateways === 0) return fn();
  const scope = scopes.getStore();
  if (scope === undefined) return fn();
  const parent = scope.propagator.extract(ROOT_CONTEXT, carrier, recordGetter);
  const remote = trace.getSpanContext(parent);
  if (remote === undefined || !isSpanContextValid(remote)) return fn();
  const span = scope.tracer.startSpan(
    name,
    { kind: SpanKind.SERVER, links: [{ context: scope.request.spanContext() }] },
    parent,
  );
  try {
    return await scopes.run({ ...scope, context: trace.setSpan(parent, span), request: span }, fn);
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** The attributes a call's stage spans share (mutable: later stages add the decision). */
export type CallAttributes = Attributes;

/**
 * A call's attributes, or undefined when no request is traced (nothing allocated then): the
 * caller's tenant, the canonical action and the decision id once known.
 */
export function tracedCall(
  subject: { tenant: string },
  action: string | null,
  decisionId: string | undefined,
): CallAttributes | undefined {
  if (tracingGateways === 0 || scopes.getStore() === undefined) return undefined;
  const attributes: CallAttributes = { "writ.tenant": subject.tenant };
  if (action !== null) attributes["writ.action"] = action;
  if (decisionId !== undefined) attributes["writ.decision_id"] = decisionId;
  return attributes;
}

/** `describe` for stage 5: the decision and the policy revision that made it. */
export function decisionAttributes(evaluation: {
  decision: { decision: string };
  revision: string;
}): Attributes {
  return { "writ.decision": evaluation.decision.decision, "writ.policy.revision": evaluation.revision };
}

/** `describe` for stage 3: the caller's tenant (on the identity span; never the subject's claims). */
export function subjectAttributes(subject: { tenant: string }): Attributes {
  return { "writ.tenant": subject.tenant };
}

/**
 * Runs one stage, in a child span of the request's when the request is traced. `attributes` is
 * the call's: what `describe` returns for the stage's result is added to it, so the stages after
 * it carry that too (the decision after `decide`). Sync stages stay sync.
 */
export function stage<T>(
  name: StageName,
  attributes: Attributes | undefined,
  fn: () => T,
  describe?: (value: Awaited<T>) => Attributes,
): T {
  if (tracingGateways === 0) return fn();
  const scope = scopes.getStore();
  if (scope === undefined) return fn();
  const span = scope.tracer.startSpan(name, attributes ? { attributes } : {}, scope.context);
  const done = (value: Awaited<T>): void => {
    if (describe !== undefined) {
      const more = describe(value);
      if (attributes !== undefined) Object.assign(attributes, more);
      span.setAttributes(more);
    }
    span.end();
  };
  const failed = (error: unknown): never => {
    failSpan(span, error);
    span.end();
    throw error;
  };
  let value: T;
  try {
    value = scopes.run({ ...scope, context: trace.setSpan(scope.context, span) }, fn);
  } catch (error) {
    return failed(error);
  }
  if (value instanceof Promise) {
    // The promise's type is T's: what `then` gives is T once awaited.
    return value.then((v: Awaited<T>) => {
      done(v);
      return v;
    }, failed) as T;
  }
  done(value as Awaited<T>);
  return value;
}

/** Marks a span failed with the error's kind (a WritError's category, a `code`, else its class). */
export function failSpan(span: Span, error: unknown): void {
  const type = errorType(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  span.setAttribute("error.type", type);
}

function errorType(error: unknown): string {
  if (error instanceof WritError) return error.category;
  if (error instanceof Error) {
    const code: unknown = Reflect.get(error, "code");
    return typeof code === "string" ? code : error.name;
  }
  return "unknown";
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

/** The running span's `traceparent` (and `tracestate`) for an outgoing call; none when untraced. */
export function traceHeaders(): Readonly<Record<string, string>> {
  if (tracingGateways === 0) return noHeaders;
  const scope = scopes.getStore();
  if (scope === undefined) return noHeaders;
  const headers: Record<string, string> = {};
  scope.propagator.inject(scope.context, headers, recordSetter);
  return headers;
}
