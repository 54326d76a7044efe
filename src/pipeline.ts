/**
 * The pipeline (DESIGN section 1): every tool call walks these stages, in this order.
 *
 *   1. intake         — parseProposal: the provider's payload to ProposedCalls
 *   2. normalization  — normalize: contract, validated arguments, resource, args digest
 *   3. identity       — identity.verify: the caller's bearer JWT to a Subject
 *   4. resource       — resourceContext: ownership and revision from the store
 *   5. policy         — policy.evaluate: the compiled Rego decision, validated, fail closed
 *   6. approval       — require_approval stores an approval request (src/approvals) and answers
 *                       approval_required with its id, status pending
 *   7. grant          — grants.issue: a signed, single-use grant bound to this exact call
 *  10. decision log   — log.append: durable before the answer leaves
 *   8. dispatch       — (with execute) the grant is verified and consumed, the backend runs
 *   9. result         — the layered result of DESIGN section 7
 *
 * The log entry is written before dispatch so that no grant exists without its entry.
 */
import { randomUUID } from "node:crypto";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { z } from "zod";
import { requestApproval } from "./approvals/service.ts";
import { enforceConditions, finalArguments } from "./conditions/index.ts";
import type { ContractRegistry, ToolContract } from "./contracts/index.ts";
import { jsonDigest } from "./core/digest.ts";
import { WritError, type WritErrorBody } from "./core/errors.ts";
import { isRecord } from "./core/json.ts";
import type {
  CanonicalAction,
  Condition,
  DecisionKind,
  GrantClaims,
  PolicyDecision,
  PolicyInput,
  ProposalFormat,
  ProposedCall,
  Reason,
  ResourceContext,
  ResourceRef,
  Subject,
} from "./core/types.ts";
import { conditionSchema } from "./core/types.ts";
import type { DecisionLog } from "./decisionlog/index.ts";
import type { InProcessHandler, ToolOutput } from "./demo/repository.ts";
import { type CredentialResolver, dispatchHttp } from "./dispatch/index.ts";
import { GrantError, verifyGrant } from "./executor/index.ts";
import type { GrantSigner } from "./grants/index.ts";
import type { IdentityVerifier } from "./identity/index.ts";
import { parseProposal } from "./intake/index.ts";
import { upstreamOutput } from "./mcp/output.ts";
import type { McpUpstreams } from "./mcp/upstream.ts";
import { type NormalizedCall, normalize } from "./normalize/index.ts";
import type { GatewayMetrics } from "./observability/metrics.ts";
import { type PolicyEngine, PolicyFailure } from "./policy/index.ts";
import { type LayeredResult, shapeResult } from "./results/index.ts";
import type { Store, StoredResource } from "./store/types.ts";

export interface Gateway {
  contracts: ContractRegistry;
  identity: IdentityVerifier;
  store: Store;
  policy: PolicyEngine;
  grants: GrantSigner;
  log: DecisionLog;
  handlers: ReadonlyMap<string, InProcessHandler>;
  metrics: GatewayMetrics;
  /** The audience of grants for in-process tools. */
  executorId: string;
  /** The clock for approval requests and their expiry (default: the system clock). */
  now?: () => Date;
  /** Backend credentials, attached at dispatch only (HTTP backends' `credentials_ref`). */
  credentials: CredentialResolver;
  /** Connections to the upstream MCP servers (`backend: {kind: mcp}` contracts). */
  mcp?: McpUpstreams;
}

/** What a `require_approval` outcome carries (DESIGN section 2). */
export interface ApprovalView {
  id: string;
  status: "pending";
  approver_roles: string[];
  expires_at: string;
}

export interface ProposalRequest {
  authorization: string | undefined;
  format: ProposalFormat;
  payload: unknown;
  session?: string;
  execute: boolean;
  requestId: string;
}

export interface IssuedGrantView {
  token: string;
  jti: string;
  audience: string;
  expires_at: string;
  max_uses: number;
}

export type { LayeredResult };

export interface CallOutcome {
  call_id: string;
  tool: string;
  decision: DecisionKind | "error";
  /** Reasons the model may see (`visible_to_model`). */
  reasons: Reason[];
  decision_id: string;
  grant?: IssuedGrantView;
  approval?: ApprovalView;
  error?: WritErrorBody;
  result?: LayeredResult;
}

const INTAKE_PATH = "writ/intake";

/** The audience of grants for a contract's backend. */
export function executorOf(contract: ToolContract, gateway: Pick<Gateway, "executorId">): string {
  switch (contract.backend.kind) {
    case "inprocess":
      return gateway.executorId;
    case "http":
      return new URL(contract.backend.url).origin;
    case "mcp":
      return `mcp:${contract.backend.server}`;
  }
}

export function visible(reasons: readonly Reason[]): Reason[] {
  return reasons.filter((r) => r.visible_to_model);
}

export async function resourceContext(
  store: Store,
  ref: ResourceRef | undefined,
): Promise<{ context: ResourceContext; stored: StoredResource | undefined }> {
  if (!ref) return { context: { type: "none", id: "", known: false, attributes: {} }, stored: undefined };
  const stored = await store.getResource(ref.type, ref.id);
  if (!stored) return { context: { type: ref.type, id: ref.id, known: false, attributes: {} }, stored };
  return {
    context: {
      type: stored.type,
      id: stored.id,
      known: true,
      owner: stored.owner,
      tenant: stored.tenant,
      revision: String(stored.revision),
      attributes: stored.attributes,
    },
    stored,
  };
}

/** A refusal decided without (or instead of) the policy: logged like any decision. */
function errorOutcome(call: ProposedCall, decisionId: string, error: WritError): CallOutcome {
  return {
    call_id: call.callId,
    tool: call.tool,
    decision: "error",
    reasons: [],
    decision_id: decisionId,
    error: error.toJSON(),
  };
}

function asWritError(error: unknown): WritError {
  if (error instanceof WritError) return error;
  return new WritError("internal", "Writ failed while handling the call", {
    suggestedFix: "retry later; if it persists, report the decision id to the operator",
    cause: error,
  });
}

/**
 * Decides every call of a proposal. Throws WritError only when the whole request is refused
 * (malformed payload, unauthenticated); each such refusal is logged first.
 */
export async function handleProposal(gw: Gateway, req: ProposalRequest): Promise<CallOutcome[]> {
  const revision = gw.policy.revision ?? "none";

  // 1. Proposal intake.
  let calls: ProposedCall[];
  try {
    calls = parseProposal(req.format, req.payload).calls;
  } catch (error) {
    const e = asWritError(error);
    await gw.log.append({
      path: INTAKE_PATH,
      input: { format: req.format, session: req.session ?? null },
      policy_revision: revision,
      subject: null,
      tenant: null,
      action: null,
      resource: null,
      decision: "error",
      error: e.category,
      reasons: [{ code: e.category, message: e.message, visible_to_model: true }],
      request_id: req.requestId,
    });
    gw.metrics.decisions.inc({ decision: "error" });
    throw e;
  }

  // 2. Normalization, per call.
  const normalized: Array<NormalizedCall | WritError> = calls.map((call) => {
    try {
      return normalize(call, gw.contracts);
    } catch (error) {
      return asWritError(error);
    }
  });

  // 3. Identity, once per request; a refused token refuses every call, and each attempt is logged.
  let subject: Subject;
  try {
    subject = await gw.identity.verify(req.authorization);
  } catch (error) {
    const e = asWritError(error);
    for (const [i, call] of calls.entries()) {
      const n = normalized[i];
      await gw.log.append({
        path: INTAKE_PATH,
        input: { tool: call.tool, source: call.source, session: req.session ?? null },
        policy_revision: revision,
        subject: null,
        tenant: null,
        action: n instanceof WritError || !n ? null : n.action.name,
        resource: n instanceof WritError || !n || !n.resource ? null : n.resource,
        decision: "error",
        error: e.category,
        reasons: [{ code: e.category, message: e.message, visible_to_model: true }],
        request_id: req.requestId,
      });
      gw.metrics.decisions.inc({ decision: "error" });
    }
    throw e;
  }

  const outcomes: CallOutcome[] = [];
  for (const [i, call] of calls.entries()) {
    const n = normalized[i]!;
    const callStarted = performance.now();
    const outcome =
      n instanceof WritError
        ? await refuseBeforePolicy(gw, req, call, subject, n, revision)
        : await decideCall(gw, req, call, subject, n);
    gw.metrics.decisions.inc({ decision: outcome.decision });
    gw.metrics.decisionSeconds.observe((performance.now() - callStarted) / 1000);
    outcomes.push(outcome);
  }
  return outcomes;
}

async function refuseBeforePolicy(
  gw: Gateway,
  req: ProposalRequest,
  call: ProposedCall,
  subject: Subject,
  error: WritError,
  revision: string,
): Promise<CallOutcome> {
  const entry = await gw.log.append({
    path: INTAKE_PATH,
    input: { tool: call.tool, source: call.source, arguments: call.arguments, session: req.session ?? null },
    policy_revision: revision,
    subject: subject.id,
    tenant: subject.tenant,
    action: null,
    resource: null,
    decision: "error",
    error: error.category,
    reasons: [{ code: error.category, message: error.message, visible_to_model: true }],
    request_id: req.requestId,
  });
  return errorOutcome(call, entry.decision_id, error);
}

function policyInput(
  subject: Subject,
  action: CanonicalAction,
  resource: ResourceContext,
  req: ProposalRequest,
  source: ProposedCall["source"],
): PolicyInput {
  return {
    subject,
    action,
    resource,
    context: {
      time_ns: Date.now() * 1_000_000,
      request_id: req.requestId,
      source,
      ...(req.session === undefined ? {} : { session: req.session }),
      phase: "call",
    },
  };
}

/** Stages 4–10 for one well-formed call of an authenticated caller. */
async function decideCall(
  gw: Gateway,
  req: ProposalRequest,
  call: ProposedCall,
  subject: Subject,
  n: NormalizedCall,
): Promise<CallOutcome> {
  const decisionId = randomUUID();

  // 4. Resource context.
  const { context: resource, stored } = await resourceContext(gw.store, n.resource);
  const input = policyInput(subject, n.action, resource, req, call.source);

  // 5. Policy evaluation, failing closed.
  let decision: PolicyDecision;
  let revision = gw.policy.revision ?? "none";
  let failure: PolicyFailure | undefined;
  const evalStarted = process.hrtime.bigint();
  try {
    const evaluated = gw.policy.evaluate(input);
    decision = evaluated.decision;
    revision = evaluated.revision;
  } catch (error) {
    if (!(error instanceof PolicyFailure)) throw error;
    failure = error;
    gw.metrics.policyFailures.inc({ reason: error.code });
    decision = {
      decision: "deny",
      reasons: [
        { code: error.code, message: error.message, visible_to_model: false },
        {
          code: "policy_unavailable",
          message: "the policy could not decide this call, so it is denied",
          visible_to_model: true,
        },
      ],
      conditions: [],
    };
  }
  const evalNs = Number(process.hrtime.bigint() - evalStarted);

  // 6. Approval: the request is stored, bound to this exact call; approvers decide later.
  // 7. Grant.
  let grant: IssuedGrantView | undefined;
  let grantError: WritError | undefined;
  let approval: ApprovalView | undefined;
  if (decision.decision === "allow" || decision.decision === "allow_with_conditions") {
    grant = await issueGrant(gw, {
      subject,
      contract: n.contract,
      action: n.action,
      resource: n.resource,
      resourceRevision: resource.revision,
      decision,
      decisionId,
      policyRevision: revision,
    });
  } else if (decision.decision === "require_approval") {
    approval = await requestApproval(gw, {
      subject,
      call,
      normalized: n,
      resourceRevision: stored?.revision ?? null,
      decision,
      decisionId,
      policyRevision: revision,
      session: req.session ?? null,
    });
    grantError = new WritError(
      "approval_required",
      `this call needs an approval before it can run: approval ${approval.id} is pending`,
      {
        suggestedFix: `ask someone with one of the roles ${approval.approver_roles.join(", ")} to approve ${approval.id}, then fetch the grant with GET /v1/approvals/${approval.id}`,
      },
    );
  } else {
    const shown = visible(decision.reasons);
    grantError = new WritError(
      "policy_denied",
      shown.map((r) => r.message).join("; ") || "the policy denied this call",
      {
        suggestedFix:
          "change the call so the policy allows it, or ask for access; the reasons say what was refused",
      },
    );
  }

  // 10. Decision log: durable before the answer (and the grant) leaves Writ.
  await gw.log.append({
    decision_id: decisionId,
    path: gw.policy.entrypoint,
    input,
    ...(failure ? {} : { result: decision }),
    policy_revision: revision,
    metrics: { timer_rego_query_eval_ns: evalNs },
    subject: subject.id,
    tenant: subject.tenant,
    action: n.action.name,
    resource: n.resource ?? null,
    decision: decision.decision,
    reasons: decision.reasons,
    error: failure ? failure.code : null,
    grant_jti: grant?.jti ?? null,
    approval_id: approval?.id ?? null,
    conditions: decision.conditions,
    request_id: req.requestId,
  });

  const outcome: CallOutcome = {
    call_id: call.callId,
    tool: call.tool,
    decision: decision.decision,
    reasons: visible(decision.reasons),
    decision_id: decisionId,
    ...(grant ? { grant } : {}),
    ...(approval ? { approval } : {}),
    ...(grantError ? { error: grantError.toJSON() } : {}),
  };

  // 8–9. Dispatch and result, when the caller asked Writ to execute.
  if (req.execute && grant) {
    try {
      outcome.result = await dispatch(gw, { n, token: grant.token, requestId: req.requestId });
    } catch (error) {
      outcome.error = asWritError(error).toJSON();
    }
  }
  return outcome;
}

export interface GrantIssue {
  /** The grant's `sub` and `tnt`: the caller, or the requester of an approved call. */
  subject: Pick<Subject, "id" | "tenant">;
  contract: ToolContract;
  action: CanonicalAction;
  resource: ResourceRef | undefined;
  /** The resource revision the decision saw (bound as `res.rev`). */
  resourceRevision: string | undefined;
  decision: PolicyDecision;
  decisionId: string;
  policyRevision: string;
}

/** Stage 7: a signed, single-use grant bound to exactly this call and decision. */
export async function issueGrant(gw: Gateway, g: GrantIssue): Promise<IssuedGrantView> {
  const audience = executorOf(g.contract, gw);
  const retried =
    g.contract.backend.kind === "http" && g.contract.idempotency !== "none"
      ? (g.contract.retry?.attempts ?? 1)
      : 1;
  const maxUses = Math.max(
    g.decision.conditions.find((c) => c.type === "max_uses")?.uses ?? g.decision.grant?.max_uses ?? 1,
    // An idempotent HTTP call may be retried with the same grant; the backend counts each try.
    retried,
  );
  const issued = await gw.grants.issue({
    aud: audience,
    sub: g.subject.id,
    tnt: g.subject.tenant,
    act: { name: g.action.name, version: g.action.version },
    res: g.resource
      ? {
          type: g.resource.type,
          id: g.resource.id,
          ...(g.resourceRevision === undefined ? {} : { rev: g.resourceRevision }),
        }
      : { type: "none", id: "" },
    // The digest of the FINAL arguments: what the dispatch sends after `args_override`.
    args: jsonDigest(finalArguments(g.action.args, g.decision.conditions)),
    cnd: g.decision.conditions,
    dec: g.decisionId,
    pol: g.policyRevision,
    max: maxUses,
    ...(g.decision.grant?.ttl_seconds === undefined ? {} : { ttlSeconds: g.decision.grant.ttl_seconds }),
  });
  return {
    token: issued.token,
    jti: issued.claims.jti,
    audience,
    expires_at: new Date(issued.claims.exp * 1000).toISOString(),
    max_uses: maxUses,
  };
}

/** The key id a grant names, read before verification. */
function kidOf(token: string): string | undefined {
  try {
    const kid = decodeProtectedHeader(token).kid;
    return typeof kid === "string" ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** The conditions a grant carries, read before verification (verification then proves them). */
function unverifiedConditions(token: string): Condition[] {
  try {
    const parsed = z.array(conditionSchema).safeParse(decodeJwt(token).cnd);
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

export interface DispatchRequest {
  /** The call as normalized from what the caller sent (arguments before any `args_override`). */
  n: NormalizedCall;
  token: string;
  requestId: string;
  /** When given, the grant must have been issued to this subject. */
  subject?: Pick<Subject, "id" | "tenant">;
}

function refusedGrant(message: string): WritError {
  return new WritError("policy_denied", `the grant was refused: ${message}`, {
    suggestedFix: "propose the call again to get a new grant",
    effectCommitted: false,
  });
}

/** How a backend is reached: an in-process handler, an HTTP service, or a tool on an MCP server. */
function backendRunner(
  gw: Gateway,
  n: NormalizedCall,
  req: DispatchRequest,
): (
  args: Record<string, unknown>,
  stored: StoredResource | undefined,
  claims: GrantClaims,
) => Promise<ToolOutput> {
  const backend = n.contract.backend;
  switch (backend.kind) {
    case "inprocess": {
      const handler = gw.handlers.get(backend.handler);
      if (!handler) {
        throw new WritError(
          "backend_unavailable",
          `no in-process handler named ${backend.handler} is registered`,
          {
            suggestedFix: "check the tool's backend.handler in the configuration",
            retryable: false,
            effectCommitted: false,
          },
        );
      }
      return (args, stored) => handler({ args, resource: stored });
    }
    case "http":
      return async (args, _stored, claims) => {
        const answer = await dispatchHttp({
          contract: n.contract,
          args,
          grant: req.token,
          requestId: req.requestId,
          ...(n.contract.idempotency === "keyed" ? { idempotencyKey: claims.jti } : {}),
          credentials: gw.credentials,
        });
        const content = isRecord(answer.output) ? answer.output : { value: answer.output };
        return {
          summary: `${n.contract.name} answered ${answer.status} after ${answer.attempts} attempt(s)`,
          structured_content: content,
          target: new URL(backend.url).origin,
        };
      };
    case "mcp":
      return async (args) => {
        if (!gw.mcp) {
          throw new WritError(
            "backend_unavailable",
            `${n.contract.name} runs on an MCP server, and none is configured`,
            {
              suggestedFix: `configure the MCP server ${backend.server} under mcp.servers`,
              retryable: false,
              effectCommitted: false,
            },
          );
        }
        const answer = await gw.mcp.call(n.contract, args, req.token, req.requestId);
        return upstreamOutput(n.contract, backend.server, answer);
      };
  }
}

/**
 * Stages 8–9, the one dispatch path (proposals with `execute` and `POST /v1/execute`): the
 * conditions' forced arguments are applied, the grant is verified against the final arguments
 * (signature, audience, action, resource, digest), the conditions are enforced, the grant is
 * consumed in the store (single use across instances), the in-process backend runs, and its
 * output becomes the layered result. Every refusal carries `effect_committed`.
 */
export async function dispatch(gw: Gateway, req: DispatchRequest): Promise<LayeredResult> {
  const { n } = req;
  const run = backendRunner(gw, n, req);
  const started = performance.now();
  const args = finalArguments(n.action.args, unverifiedConditions(req.token));
  const verify = () =>
    verifyGrant(req.token, {
      issuer: gw.grants.issuer,
      audience: executorOf(n.contract, gw),
      keys: gw.grants.jwks(),
      action: { name: n.action.name, version: n.action.version },
      args,
      ...(n.resource ? { resource: n.resource } : {}),
      replay: false,
    });
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
    if (error instanceof GrantError) throw refusedGrant(error.message);
    throw error;
  }
  if (req.subject && (claims.sub !== req.subject.id || claims.tnt !== req.subject.tenant)) {
    throw refusedGrant(`it was issued to ${claims.sub}, not to the caller`);
  }

  // Conditions, against the resource as it is now; then the single use.
  const stored = n.resource ? await gw.store.getResource(n.resource.type, n.resource.id) : undefined;
  enforceConditions(claims.cnd, args, stored?.revision);
  const maxUses = Math.min(claims.max, ...claims.cnd.flatMap((c) => (c.type === "max_uses" ? [c.uses] : [])));
  const used = await gw.store.consumeGrant(claims.jti, maxUses, new Date((claims.exp + 5) * 1000));
  if (!used.ok) {
    throw refusedGrant(
      used.reason === "expired"
        ? `grant ${claims.jti} expired`
        : `grant ${claims.jti} was already used (${maxUses} use${maxUses === 1 ? "" : "s"} allowed)`,
    );
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
  const revision = output.resource_revision ?? stored?.revision;
  return shapeResult(output, {
    contracts: gw.contracts,
    contract: n.contract,
    conditions: claims.cnd,
    target: output.target ?? (n.resource ? `${n.resource.type}/${n.resource.id}` : n.contract.name),
    resourceRevision: revision,
    latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
    requestId: req.requestId,
  });
}

export interface ExecuteRequest {
  authorization: string | undefined;
  grant: string;
  /** The call as the caller sends it (canonical form: `{tool, arguments}`, unless `format` says otherwise). */
  call: unknown;
  /** The call's format (default `canonical`); MCP callers send their `tools/call` request. */
  format?: Exclude<ProposalFormat, "auto">;
  requestId: string;
}

/** `POST /v1/execute`: an authenticated caller runs a call with the grant Writ issued for it. */
export async function executeWithGrant(
  gw: Gateway,
  req: ExecuteRequest,
): Promise<{ tool: string; result: LayeredResult }> {
  const subject = await gw.identity.verify(req.authorization);
  const calls = parseProposal(req.format ?? "canonical", req.call).calls;
  const [call] = calls;
  if (call === undefined || calls.length !== 1) {
    throw new WritError("invalid_argument", "execute takes exactly one call", {
      suggestedFix: "send one call per execute request",
      effectCommitted: false,
    });
  }
  const n = normalize(call, gw.contracts);
  const result = await dispatch(gw, { n, token: req.grant, requestId: req.requestId, subject });
  return { tool: call.tool, result };
}

// ---------------------------------------------------------------------------------- discovery

export interface DiscoveredTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  contract: {
    name: string;
    version: string;
    side_effect: ToolContract["side_effect"];
    idempotency: ToolContract["idempotency"];
  };
}

/**
 * Tool discovery: the decision policy runs with `context.phase = "discover"` for each contract,
 * and only tools it does not deny are listed, in the registry's stable order. Results are cached
 * per authorization context (subject, tenant, roles, scopes, policy revision, family), never
 * shared across subjects.
 */
export class ToolDiscovery {
  private readonly cache = new Map<string, DiscoveredTool[]>();

  constructor(private readonly gw: Gateway) {}

  list(subject: Subject, family: "default" | "openai" | "anthropic" | "mcp"): DiscoveredTool[] {
    const revision = this.gw.policy.revision ?? "none";
    const key = JSON.stringify([
      subject.id,
      subject.tenant,
      [...subject.roles].sort(),
      [...subject.scopes].sort(),
      revision,
      family,
      this.gw.mcp?.catalogVersion ?? 0,
    ]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const tools: DiscoveredTool[] = [];
    for (const contract of this.gw.contracts.list()) {
      // A tool on an MCP server is listed only while that server offers it.
      const backend = contract.backend;
      if (backend.kind === "mcp" && !this.gw.mcp?.offers(backend.server, backend.tool)) continue;
      const action: CanonicalAction = {
        name: contract.name,
        version: contract.version,
        side_effect: contract.side_effect,
        idempotency: contract.idempotency,
        data_classification: contract.data_classification,
        args: {},
        args_digest: jsonDigest({}),
      };
      const input: PolicyInput = {
        subject,
        action,
        resource: { type: contract.resource?.type ?? "none", id: "", known: false, attributes: {} },
        context: {
          time_ns: Date.now() * 1_000_000,
          request_id: "discovery",
          source: family === "default" ? "canonical" : family,
          phase: "discover",
        },
      };
      let allowed = false;
      try {
        allowed = this.gw.policy.evaluate(input).decision.decision !== "deny";
      } catch (error) {
        if (!(error instanceof PolicyFailure)) throw error;
      }
      if (!allowed) continue;
      const view = this.gw.contracts.modelView(contract, family);
      tools.push({
        name: view.name,
        description: view.description,
        input_schema: view.input_schema,
        contract: {
          name: contract.name,
          version: contract.version,
          side_effect: contract.side_effect,
          idempotency: contract.idempotency,
        },
      });
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, tools);
    return tools;
  }
}
