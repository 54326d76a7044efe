/**
 * `requireGrant`: a hono middleware that refuses a request unless it carries a valid grant for
 * exactly the arguments in its body. On success the verified claims are in `c.get("grant")`.
 * Refusals are answered with a WritError-shaped body (DESIGN section 7) plus the grant error
 * `code`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { WritError } from "../core/errors.ts";
import type { GrantClaims } from "../core/types.ts";
import { GrantError, grantErrorDisposition } from "./errors.ts";
import { MemoryReplayCache, type ReplayGuard } from "./replay.ts";
import { type VerifyGrantOptions, verifyGrant } from "./verify.ts";

/** The hono environment `requireGrant` provides: `c.get("grant")` is the verified claims. */
export type GrantEnv = { Variables: { grant: GrantClaims } };

type ActionRef = NonNullable<VerifyGrantOptions["action"]>;
type ResourceRef = NonNullable<VerifyGrantOptions["resource"]>;
type RevisionRead = string | number | null;

export interface RequireGrantOptions
  extends Omit<VerifyGrantOptions, "args" | "action" | "resource" | "resourceRevision" | "replay" | "now"> {
  /** The action this route performs, fixed or read from the request. */
  action?: ActionRef | ((c: Context) => ActionRef | undefined);
  /** The resource this request touches, fixed or read from the request (a path parameter, say). */
  resource?: ResourceRef | ((c: Context) => ResourceRef | undefined);
  /**
   * The revision of the request's resource as this backend reads it now (`null`: it does not
   * exist): a grant decided on another revision is refused `stale_revision` (HTTP 409).
   */
  resourceRevision?: (resource: ResourceRef, c: Context) => RevisionRead | Promise<RevisionRead>;
  /** Take the arguments from this field of the JSON body (e.g. `"arguments"`) instead of the whole body. */
  argsField?: string;
  /** Single use; defaults to a `MemoryReplayCache` owned by this middleware. */
  replay?: ReplayGuard | false;
  /** Largest accepted body (default 1 MiB). */
  maxBodyBytes?: number;
}

export function requireGrant(options: RequireGrantOptions): MiddlewareHandler<GrantEnv> {
  const replay = options.replay === undefined ? new MemoryReplayCache() : options.replay;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  return async (c, next) => {
    const token = grantFromHeaders(c.req.header("authorization"), c.req.header("x-writ-grant"));
    if (token === undefined) {
      return refuse(
        c,
        new GrantError(
          "missing_grant",
          "no grant was presented",
          "send the grant Writ issued for this call in `Authorization: Writ-Grant <grant>` or `X-Writ-Grant`",
        ),
      );
    }

    const read = await readJsonBody(c, maxBodyBytes);
    if (!read.ok) return c.json(read.error.toJSON(), read.error.category === "payload_too_large" ? 413 : 400);
    const body = read.value;
    let args: unknown = body;
    if (options.argsField !== undefined) {
      const field = options.argsField;
      if (typeof body !== "object" || body === null || Array.isArray(body) || !Object.hasOwn(body, field)) {
        return refuse(
          c,
          new GrantError(
            "args_mismatch",
            `the request body has no ${JSON.stringify(field)} field holding the arguments`,
            `send {"${field}": <the approved arguments>}`,
          ),
        );
      }
      args = Reflect.get(body, field);
    }

    try {
      const resource = typeof options.resource === "function" ? options.resource(c) : options.resource;
      const claims = await verifyGrant(token, {
        issuer: options.issuer,
        audience: options.audience,
        keys: options.keys,
        action: typeof options.action === "function" ? options.action(c) : options.action,
        resource,
        ...(resource !== undefined && options.resourceRevision !== undefined
          ? { resourceRevision: await options.resourceRevision(resource, c) }
          : {}),
        args,
        replay,
        clockToleranceSeconds: options.clockToleranceSeconds,
      });
      c.set("grant", claims);
    } catch (error) {
      if (error instanceof GrantError) return refuse(c, error);
      throw error;
    }
    await next();
  };
}

/** The grant from `Authorization: Writ-Grant <jwt>`, else from `X-Writ-Grant`. */
function grantFromHeaders(authorization: string | undefined, header: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^\s*Writ-Grant\s+(\S+)\s*$/i.exec(authorization);
  if (match?.[1] !== undefined) return match[1];
  const value = header?.trim();
  return value === undefined || value === "" ? undefined : value;
}

type BodyRead = { ok: true; value: unknown } | { ok: false; error: WritError };

async function readJsonBody(c: Context, maxBytes: number): Promise<BodyRead> {
  const declared = Number(c.req.header("content-length") ?? "0");
  const tooLarge = (): BodyRead => ({
    ok: false,
    error: new WritError("payload_too_large", `the request body is larger than ${maxBytes} bytes`, {
      suggestedFix: "send smaller arguments, or raise maxBodyBytes on the executor",
    }),
  });
  if (declared > maxBytes) return tooLarge();
  const text = await c.req.text();
  if (Buffer.byteLength(text, "utf8") > maxBytes) return tooLarge();
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value };
  } catch {
    return {
      ok: false,
      error: new WritError("invalid_argument", "the request body is not valid JSON", {
        suggestedFix: "send the approved arguments as a JSON body (Content-Type: application/json)",
      }),
    };
  }
}

function refuse(c: Context, error: GrantError): Response {
  const { status, category } = grantErrorDisposition(error.code);
  const writError = new WritError(category, error.problem, {
    suggestedFix: error.suggestedFix,
    retryable: error.code === "unavailable",
  });
  if (status === 401) c.header("WWW-Authenticate", `Writ-Grant error="${error.code}"`);
  return c.json({ ...writError.toJSON(), code: error.code }, status);
}
