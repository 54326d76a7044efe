/**
 * Stage 9, dispatch: the one path that runs a call (proposals with `execute`, and
 * `POST /v1/execute`). The conditions' forced arguments are applied, the grant is verified
 * against the final arguments (signature, audience, action, resource, digest), the conditions
 * are enforced, the grant is consumed in the store (single use across instances), and the
 * backend runs. Every refusal carries `effect_committed`.
 */
import { decodeJwt, decodeProtectedHeader } from "jose";
import { z } from "zod";
import { enforceConditions, finalArguments } from "../conditions/index.ts";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { CallObserver, ToolOutput } from "../core/handlers.ts";
import { type Condition, conditionSchema, type GrantClaims, type Subject } from "../core/types.ts";
import { prepareBackend } from "../dispatch/index.ts";
import {
  boundRevision,
  GrantError,
  type GrantErrorCode,
  type VerifyGrantOptions,
  verifyGrant,
} from "../executor/index.ts";
// Not on writ/executor's surface (a backend never skips the signature check): see DispatchRequest.issued.
import { checkIssuedGrant } from "../executor/issued.ts";
import type { NormalizedCall } from "../normalize/index.ts";
import { schedulingOf } from "../schedule/index.ts";
import type { GrantUse, StoredResource } from "../store/types.ts";
import { executorOf } from "./07-grant.ts";

/** The key id a grant names, read before verification. */
function kidOf(token: string): string | undefined {
  try {
    const kid = decodeProtectedHeader(token).kid;
    return typeof kid === "string" ? kid : undefined;
  } catch {
    return undefined;
  }
}

const conditionsSchema = z.array(conditionSchema);

/** The conditions a grant carries, read before verification (verification then proves them). */
function unverifiedConditions(token: string): Condition[] {
  try {
    const parsed = conditionsSchema.safeParse(decodeJwt(token).cnd);
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

/** The last key set each gateway's grants were verified with, and its JSON. */
const keySets = new WeakMap<Gateway["grants"], { json: string; keys: { keys: unknown[] } }>();

/**
 * The public keys this gateway's grants verify with: the same object for as long as the keys are
 * the same, so that the verifier keeps the keys it imported (a new object per call would have it
 * check and import the key set again for every call).
 */
function grantKeys(gw: Gateway): { keys: unknown[] } {
  const keys = gw.grants.jwks();
  const json = JSON.stringify(keys);
  const known = keySets.get(gw.grants);
  if (known?.json === json) return known.keys;
  keySets.set(gw.grants, { json, keys });
  return keys;
}

export interface DispatchRequest {
  /** The call as normalized from what the caller sent (arguments before any `args_override`). */
  n: NormalizedCall;
  token: string;
  requestId: string;
  /** When given, the grant must have been issued to this subject. */
  subject?: Pick<Subject, "id" | "tenant">;
  /** Who watches the call while it runs (MCP backends report progress and logs, and cancel). */
  observer?: CallObserver;
  /**
   * The grant's claims when this process issued it for this very call and its token has not left
   * the process since (a proposal with `execute`): every claim is checked, not the signature
   * (executor/issued.ts `checkIssuedGrant`). Absent for a grant a caller presents.
   */
  issued?: GrantClaims;
  /**
   * Told the grant's claims once they are verified (and the grant is the caller's), before
   * anything runs: a run that fails after that still knows which grant it used.
   */
  verified?: (claims: GrantClaims) => void;
}

/**
 * A grant dispatch refused; `code` says why for the decision log: a `GrantError` code of
 * src/executor (bad_signature, expired, replayed, args_mismatch, …) or `wrong_subject`.
 */
export class GrantRefusedError extends WritError {
  readonly code: GrantErrorCode | "wrong_subject";
  /** The grant's claims, when its signature was good (a stolen or spent grant). */
  readonly claims: GrantClaims | undefined;

  constructor(code: GrantErrorCode | "wrong_subject", message: string, claims?: GrantClaims) {
    super(
      code === "stale_revision" ? "stale_revision" : "policy_denied",
      `the grant was refused: ${message}`,
      {
        suggestedFix:
          code === "stale_revision"
            ? "propose the call again: the policy decides again on the resource as it is now"
            : "propose the call again to get a new grant",
        effectCommitted: false,
      },
    );
    this.code = code;
    this.claims = claims;
  }
}

/** What ran: the backend's output, with what the result stage needs to shape it. */
export interface Dispatched {
  output: ToolOutput;
  claims: GrantClaims;
  /** The resource as it was when the conditions were enforced. */
  stored: StoredResource | undefined;
  /** When dispatch started (performance.now()), for the result's latency. */
  started: number;
}

export async function dispatch(gw: Gateway, req: DispatchRequest): Promise<Dispatched> {
  const { n } = req;
  const started = performance.now();
  const args = finalArguments(n.action.args, req.issued?.cnd ?? unverifiedConditions(req.token));
  const options: VerifyGrantOptions = {
    issuer: gw.grants.issuer,
    audience: executorOf(n.contract, gw),
    keys: grantKeys(gw),
    action: { name: n.action.name, version: n.action.version },
    args,
    ...(n.resource ? { resource: n.resource } : {}),
    replay: false,
  };
  const issued = req.issued;
  const verify = () =>
    issued === undefined ? verifyGrant(req.token, options) : checkIssuedGrant(issued, options);
  let claims: GrantClaims;
  try {
    claims = await verify().catch(async (error: unknown) => {
      // Signed by a key another instance rotated in since this one last looked: look again.
      const kid =
        error instanceof GrantError && error.code === "bad_signature" ? kidOf(req.token) : undefined;
      if (kid !== undefined && (await gw.grants.reloadForKid(kid))) return verify();
      throw error;
    });
  } catch (error) {
    if (error instanceof GrantError) throw new GrantRefusedError(error.code, error.message);
    throw error;
  }
  if (req.subject && (claims.sub !== req.subject.id || claims.tnt !== req.subject.tenant)) {
    throw new GrantRefusedError("wrong_subject", `it was issued to ${claims.sub}, not to the caller`, claims);
  }
  req.verified?.(claims);
  const group = n.contract.concurrency_group;
  if (group === undefined) return runGranted(gw, req, args, claims, started);
  // Calls of one group never overlap: the turn comes before the conditions read the resource,
  // and a call that waits too long fails before its grant is used.
  const turn = await schedulingOf(gw).groups.enter(n.contract, group, req.observer?.signal);
  try {
    return await runGranted(gw, req, args, claims, started);
  } finally {
    await turn.release();
  }
}

/**
 * The resource and revision a grant is bound to, as the store compares them: undefined for a
 * grant that names no resource; revision `null` when the resource did not exist at the decision.
 * A revision no resource can have (not a positive integer) can never match: -1 stands for it.
 */
function revisionBinding(claims: GrantClaims): GrantUse["resource"] {
  const rev = boundRevision(claims);
  if (rev === undefined) return undefined;
  const revision = rev === null ? null : /^[1-9][0-9]{0,14}$/.test(rev) ? Number(rev) : -1;
  return { type: claims.res.type, id: claims.res.id, revision };
}

function staleGrant(claims: GrantClaims, now: number | null): GrantRefusedError {
  const bound = claims.res.rev;
  return new GrantRefusedError(
    "stale_revision",
    `${claims.res.type}/${claims.res.id} ${now === null ? "does not exist now" : `is at revision ${now} now`}, but grant ${claims.jti} was decided on ${bound === undefined ? "its absence" : `revision ${bound}`}`,
    claims,
  );
}

/** A verified grant's call: its conditions enforced, the grant used, the backend run. */
async function runGranted(
  gw: Gateway,
  req: DispatchRequest,
  args: Record<string, unknown>,
  claims: GrantClaims,
  started: number,
): Promise<Dispatched> {
  const { n } = req;
  // Conditions, against the resource as it is now; then the single use.
  const stored = n.resource ? await gw.store.getResource(n.resource.type, n.resource.id) : undefined;
  enforceConditions(claims.cnd, args, stored?.revision);
  // Everything the run needs, resolved before the single use: a grant is spent only on a send.
  const run = await prepareBackend(gw, {
    contract: n.contract,
    backend: n.contract.backend,
    grant: req.token,
    requestId: req.requestId,
    observer: req.observer,
  });
  const maxUses = Math.min(claims.max, ...claims.cnd.flatMap((c) => (c.type === "max_uses" ? [c.uses] : [])));
  // The use counts only while the resource is still at the revision the grant was decided on
  // (another owner, other attributes: never honoured), checked in the step that spends it. A grant
  // used up says so before its revision does.
  const bound = revisionBinding(claims);
  const used = await gw.store.consumeGrant({
    jti: claims.jti,
    maxUses,
    expiresAt: new Date((claims.exp + 5) * 1000),
    ...(bound === undefined ? {} : { resource: bound }),
  });
  if (!used.ok) {
    switch (used.reason) {
      case "expired":
        throw new GrantRefusedError("expired", `grant ${claims.jti} expired`, claims);
      case "exhausted":
        throw new GrantRefusedError(
          "replayed",
          `grant ${claims.jti} was already used (${maxUses} use${maxUses === 1 ? "" : "s"} allowed)`,
          claims,
        );
      case "stale_revision":
        throw staleGrant(claims, used.revision);
    }
  }

  let output: ToolOutput;
  const backend = n.contract.backend.kind;
  try {
    output = await run(args, stored, claims);
    gw.metrics.dispatches.inc({ backend, result: "ok" });
  } catch (error) {
    gw.metrics.dispatches.inc({ backend, result: error instanceof WritError ? error.category : "internal" });
    if (error instanceof WritError) throw error;
    throw new WritError("internal", `the backend of ${n.contract.name} failed`, {
      suggestedFix:
        n.contract.side_effect === "none"
          ? "retry later; if it persists, report the request id to the operator"
          : "check the resource's state before retrying: the effect may have happened",
      effectCommitted: n.contract.side_effect === "none" ? false : "unknown",
      cause: error,
    });
  }
  return { output, claims, stored, started };
}
