/**
 * HTTP dispatch (DESIGN section 1, stage 8): sends an authorized call to a contract's `http`
 * backend with the grant, the request id, the idempotency key and the backend credentials
 * attached here and only here. Timeouts apply per attempt; retries only for idempotent tools
 * (`natural`, or `keyed` with a key) on network errors, timeouts and 502/503/504. Failures are
 * WritErrors (DESIGN section 7) that say whether the side effect may have happened, and never
 * contain a credential.
 */
import type { ToolContract } from "../contracts/schema.ts";
import { type ErrorCategory, WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { traceHeaders } from "../observability/tracing.ts";
import type { Backend } from "./backend.ts";
import type { BackendCredentials } from "./credentials.ts";

export interface DispatchHttpOptions {
  contract: ToolContract;
  /** The final arguments (after conditions), exactly the ones the grant's digest covers. */
  args: Record<string, unknown>;
  /** The signed grant, sent as `X-Writ-Grant`. */
  grant: string;
  requestId: string;
  idempotencyKey?: string;
  /** Resolves `backend.credentials_ref`; required when the contract names one. */
  credentials?: BackendCredentials;
  fetchImpl?: typeof fetch;
  /** Waits between retries (default setTimeout); injectable for tests. */
  sleep?: (ms: number) => Promise<void>;
}

export interface DispatchHttpResult {
  output: unknown;
  status: number;
  attempts: number;
  latencyMs: number;
}

type HttpBackend = Extract<ToolContract["backend"], { kind: "http" }>;

const retryableStatuses = new Set([502, 503, 504]);
const bodylessMethods = new Set(["GET", "DELETE"]);
/** Longest backend message quoted in an error. */
const quotedLimit = 300;

/** What every attempt of one call shares: where it goes, what it sends, how often it may try. */
interface Plan {
  contract: ToolContract;
  url: URL;
  init: { method: string; headers: Headers; body: string | undefined; timeoutMs: number };
  /** The target as quoted in errors (credentials scrubbed). */
  target: string;
  redact: (text: string) => string;
  idempotent: boolean;
  effectful: boolean;
  maxAttempts: number;
  backoffMs: number;
}

export async function dispatchHttp(options: DispatchHttpOptions): Promise<DispatchHttpResult> {
  const fetchImpl = options.fetchImpl ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = performance.now();
  const plan = await planOf(options);
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= plan.maxAttempts;
    const outcome = await sendOnce(fetchImpl, plan.url, plan.init);
    // Timeouts, network errors and 502/503/504 are tried again while attempts are left.
    if (!last && (outcome.kind !== "response" || retryableStatuses.has(outcome.status))) {
      await sleep(plan.backoffMs);
      continue;
    }
    if (outcome.kind !== "response") throw failedAttempt(plan, outcome, attempt);
    if (outcome.status >= 400) {
      const { idempotent, effectful, target } = plan;
      throw errorForStatus(outcome.status, plan.redact(backendMessage(outcome.text)), {
        tool: plan.contract.name,
        target,
        effectful,
        idempotent,
        attempt,
      });
    }
    const output = outputOf(plan, outcome);
    return {
      output,
      status: outcome.status,
      attempts: attempt,
      latencyMs: Math.round(performance.now() - started),
    };
  }
}

/** The request every attempt sends, with its credentials, and the retry rules that apply. */
async function planOf(options: DispatchHttpOptions): Promise<Plan> {
  const { contract, args } = options;
  const backend = contract.backend;
  if (backend.kind !== "http") {
    throw new WritError("internal", `tool ${contract.name} has a ${backend.kind} backend, not http`, {
      suggestedFix: "dispatch this tool with the dispatcher for its backend kind",
      retryable: false,
    });
  }
  const { url, used } = fillTemplate(backend.url, args, contract.name);
  const request = buildRequest(backend, url, args, used);
  const credentialHeaders = await credentialHeadersOf(contract.name, backend, options.credentials);
  const secrets = secretFragments(credentialHeaders);
  const redact = (text: string): string => {
    let out = text;
    for (const secret of secrets) out = out.split(secret).join("[redacted]");
    return out;
  };

  const headers = new Headers();
  for (const [name, value] of Object.entries(backend.headers ?? {})) headers.set(name, value);
  headers.set("accept", "application/json");
  if (request.body !== undefined) headers.set("content-type", "application/json");
  headers.set("x-writ-grant", options.grant);
  headers.set("x-request-id", options.requestId);
  if (options.idempotencyKey !== undefined) headers.set("idempotency-key", options.idempotencyKey);
  // The dispatch span's W3C trace context, when OpenTelemetry traces the request.
  for (const [name, value] of Object.entries(traceHeaders())) headers.set(name, value);
  for (const [name, value] of Object.entries(credentialHeaders)) headers.set(name, value);

  const idempotent =
    contract.idempotency === "natural" ||
    (contract.idempotency === "keyed" && options.idempotencyKey !== undefined);
  return {
    contract,
    url: request.url,
    init: { method: backend.method, headers, body: request.body, timeoutMs: contract.timeout_ms },
    target: `${backend.method} ${redact(request.url.origin + request.url.pathname)}`,
    redact,
    idempotent,
    effectful: contract.side_effect !== "none" && backend.method !== "GET",
    maxAttempts: idempotent ? (contract.retry?.attempts ?? 1) : 1,
    backoffMs: contract.retry?.backoff_ms ?? 0,
  };
}

/** The headers `backend.credentials_ref` names, read now (none when it names none). */
async function credentialHeadersOf(
  tool: string,
  backend: HttpBackend,
  credentials: DispatchHttpOptions["credentials"],
): Promise<Record<string, string>> {
  if (backend.credentials_ref === undefined) return {};
  if (credentials === undefined) {
    throw new WritError(
      "backend_unavailable",
      `tool ${tool} needs backend credentials ${JSON.stringify(backend.credentials_ref)} but no credential resolver was given`,
      { suggestedFix: "configure credentials: in the gateway config", retryable: false },
    );
  }
  return { ...(await credentials.resolve(backend.credentials_ref)) };
}

/** The last attempt timed out or could not connect. */
function failedAttempt(
  plan: Plan,
  outcome: Exclude<Outcome, { kind: "response" }>,
  attempt: number,
): WritError {
  const { contract, target, idempotent, effectful } = plan;
  if (outcome.kind === "timeout") {
    return new WritError(
      "timeout",
      `${contract.name}: ${target} did not answer within ${contract.timeout_ms} ms (attempt ${attempt} of ${plan.maxAttempts})`,
      {
        suggestedFix: idempotent
          ? "retry the call later"
          : "check with the backend whether the call took effect before asking again",
        retryable: idempotent,
        effectCommitted: effectful ? "unknown" : false,
      },
    );
  }
  return new WritError(
    "backend_unavailable",
    outcome.beforeSending
      ? `${contract.name}: ${target} is unreachable (${outcome.code})`
      : `${contract.name}: the connection to ${target} failed (${outcome.code})`,
    {
      suggestedFix: outcome.beforeSending
        ? "check that the backend is running, then retry"
        : "check with the backend whether the call took effect before asking again",
      retryable: outcome.beforeSending || idempotent,
      effectCommitted: outcome.beforeSending || !effectful ? false : "unknown",
      cause: outcome.cause,
    },
  );
}

/** A successful answer's JSON body (null when it has none). */
function outputOf(
  plan: Plan,
  { status, text, contentType }: Extract<Outcome, { kind: "response" }>,
): unknown {
  if (status === 204 || text.trim() === "") return null;
  try {
    if (contentType !== "" && !/json/i.test(contentType)) throw new Error("not JSON");
    return JSON.parse(text);
  } catch {
    throw new WritError(
      "backend_unavailable",
      `${plan.contract.name}: ${plan.target} answered ${status} with a body that is not JSON${contentType === "" ? "" : ` (${contentType.slice(0, 60)})`}`,
      {
        suggestedFix: "fix the backend to answer with application/json",
        retryable: false,
        effectCommitted: plan.effectful ? "unknown" : false,
      },
    );
  }
}

/**
 * The `http` backend kind: the credentials read before the grant is spent (an unreadable one
 * leaves it usable), then `dispatchHttp` with the grant's id as the idempotency key of a `keyed`
 * contract, its JSON answer as the structured content.
 */
export const httpBackend: Backend<"http"> = {
  async prepare(deps, { contract, backend, grant, requestId }) {
    const ref = backend.credentials_ref;
    const headers = ref === undefined ? undefined : await deps.credentials.resolve(ref);
    return async (args, _stored, claims) => {
      const answer = await dispatchHttp({
        contract,
        args,
        grant,
        requestId,
        ...(contract.idempotency === "keyed" ? { idempotencyKey: claims.jti } : {}),
        ...(headers === undefined ? {} : { credentials: { resolve: async () => headers } }),
      });
      const content = isRecord(answer.output) ? answer.output : { value: answer.output };
      return {
        summary: `${contract.name} answered ${answer.status} after ${answer.attempts} attempt(s)`,
        structured_content: content,
        target: new URL(backend.url).origin,
      };
    };
  },
};

// ---------------------------------------------------------------------------------- request

/** Fills `{name}` placeholders (also their percent-encoded form `%7Bname%7D`) from string or number args. */
function fillTemplate(
  template: string,
  args: Record<string, unknown>,
  tool: string,
): { url: string; used: Set<string> } {
  const used = new Set<string>();
  const url = template.replace(
    /\{([A-Za-z0-9_.-]+)\}|%7B([A-Za-z0-9_.-]+)%7D/gi,
    (_m, a?: string, b?: string) => {
      const name = (a ?? b) as string;
      const value = Object.hasOwn(args, name) ? args[name] : undefined;
      if (typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value))) {
        throw new WritError(
          "invalid_argument",
          `${tool}: the backend URL needs argument ${JSON.stringify(name)} as a string or number`,
          {
            suggestedFix: `pass ${name} as a string or number`,
            fieldErrors: [{ path: `/${name}`, message: "must be a string or number" }],
            retryable: false,
          },
        );
      }
      used.add(name);
      return encodeURIComponent(String(value));
    },
  );
  return { url, used };
}

function buildRequest(
  backend: HttpBackend,
  url: string,
  args: Record<string, unknown>,
  used: Set<string>,
): { url: URL; body: string | undefined } {
  const target = new URL(url);
  if (!bodylessMethods.has(backend.method)) return { url: target, body: JSON.stringify(args) };
  for (const [name, value] of Object.entries(args)) {
    if (used.has(name) || value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      target.searchParams.append(name, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
  return { url: target, body: undefined };
}

/** The header values and their last token (the secret after a scheme), to scrub from messages. */
function secretFragments(headers: Record<string, string>): string[] {
  const fragments = new Set<string>();
  for (const value of Object.values(headers)) {
    if (value.length > 0) fragments.add(value);
    const token = value.split(/\s+/).at(-1);
    if (token !== undefined && token.length >= 4) fragments.add(token);
  }
  return [...fragments].sort((a, b) => b.length - a.length);
}

// ---------------------------------------------------------------------------------- one attempt

type Outcome =
  | { kind: "response"; status: number; text: string; contentType: string }
  | { kind: "timeout" }
  | { kind: "network"; beforeSending: boolean; code: string; cause: unknown };

async function sendOnce(
  fetchImpl: typeof fetch,
  url: URL,
  init: { method: string; headers: Headers; body: string | undefined; timeoutMs: number },
): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs);
  try {
    const response = await fetchImpl(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: controller.signal,
      redirect: "manual",
    });
    const text = await response.text();
    return {
      kind: "response",
      status: response.status,
      text,
      contentType: response.headers.get("content-type") ?? "",
    };
  } catch (error) {
    if (controller.signal.aborted) return { kind: "timeout" };
    const code = networkCode(error);
    return {
      kind: "network",
      beforeSending: ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(code),
      code,
      cause: error,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The system error code behind a fetch failure (undici wraps it in `cause`, sometimes an AggregateError). */
function networkCode(error: unknown): string {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (typeof current !== "object" || current === null || seen.has(current)) continue;
    seen.add(current);
    const code = Reflect.get(current, "code");
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    queue.push(Reflect.get(current, "cause"));
    const errors = Reflect.get(current, "errors");
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return "network error";
}

// ---------------------------------------------------------------------------------- errors

/** A short message from the backend's error body: its `message` (or `error`) field, else the text. */
function backendMessage(text: string): string {
  let message = text.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) {
      const field = Reflect.get(parsed, "message") ?? Reflect.get(parsed, "error");
      if (typeof field === "string") message = field;
    }
  } catch {
    // not JSON: quote the text
  }
  message = message.replace(/\s+/g, " ");
  return message.length > quotedLimit ? `${message.slice(0, quotedLimit)}…` : message;
}

function errorForStatus(
  status: number,
  quoted: string,
  context: { tool: string; target: string; effectful: boolean; idempotent: boolean; attempt: number },
): WritError {
  const said = quoted === "" ? "" : `: ${quoted}`;
  if (status >= 500) {
    return new WritError(
      "backend_unavailable",
      `${context.tool}: ${context.target} failed with ${status}${context.attempt > 1 ? ` after ${context.attempt} attempts` : ""}${said}`,
      {
        suggestedFix: context.effectful
          ? "check with the backend whether the call took effect before asking again"
          : "retry the call later",
        retryable: !context.effectful || context.idempotent,
        effectCommitted: context.effectful ? "unknown" : false,
      },
    );
  }
  const mapping: Record<number, [ErrorCategory, string]> = {
    400: ["invalid_argument", "fix the arguments the backend rejected"],
    401: ["policy_denied", "the backend refused Writ's credentials or grant; ask an operator to check them"],
    403: ["policy_denied", "the backend refused the call; do not retry it unchanged"],
    404: ["not_found", "check the identifiers in the arguments"],
    409: ["conflict", "re-read the resource and retry with its current state"],
    429: ["rate_limited", "wait and retry later"],
  };
  const [category, suggestedFix] = mapping[status] ?? [
    "invalid_argument" as const,
    "fix the arguments the backend rejected",
  ];
  return new WritError(
    category,
    `${context.tool}: ${context.target} refused the call with ${status}${said}`,
    {
      suggestedFix,
      retryable: category === "rate_limited",
      effectCommitted: false,
    },
  );
}
