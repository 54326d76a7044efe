/**
 * Stage 7, the grant: an allowed call gets a signed, single-use grant bound to subject, executor,
 * action, resource (and revision), the digest of the final arguments, the conditions, and the
 * decision. Approvals issue theirs here too, to the requester.
 */
import { finalArguments } from "../conditions/index.ts";
import type { ToolContract } from "../contracts/index.ts";
import { jsonDigest } from "../core/digest.ts";
import type { Gateway, IssuedGrantView } from "../core/gateway.ts";
import type { CanonicalAction, GrantClaims, PolicyDecision, ResourceRef, Subject } from "../core/types.ts";
import { normalizedArgsDigest } from "../normalize/index.ts";

/** The audience of grants for a contract's backend. */
export function executorOf(contract: ToolContract, gateway: Pick<Gateway, "executorId">): string {
  switch (contract.backend.kind) {
    case "inprocess":
      return gateway.executorId;
    case "http":
      return new URL(contract.backend.url).origin;
    case "mcp":
    case "mcp_resource":
    case "mcp_prompt":
      return `mcp:${contract.backend.server}`;
  }
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
  return (await issueGrantWithClaims(gw, g)).view;
}

/** A grant as its caller sees it, and the claims signed. */
export interface IssuedGrant {
  view: IssuedGrantView;
  claims: GrantClaims;
}

/** `issueGrant`, with the claims signed (for a dispatch that runs the call at once: 09-dispatch `issued`). */
export async function issueGrantWithClaims(gw: Gateway, g: GrantIssue): Promise<IssuedGrant> {
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
  const args = finalArguments(g.action.args, g.decision.conditions);
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
    args: argumentsDigest(args),
    cnd: g.decision.conditions,
    dec: g.decisionId,
    pol: g.policyRevision,
    max: maxUses,
    ...(g.decision.grant?.ttl_seconds === undefined ? {} : { ttlSeconds: g.decision.grant.ttl_seconds }),
  });
  const view = {
    token: issued.token,
    jti: issued.claims.jti,
    audience,
    expires_at: new Date(issued.claims.exp * 1000).toISOString(),
    max_uses: maxUses,
    arguments: args,
  };
  return { view, claims: issued.claims };
}

/** The digest of `args`: the one normalization computed for them when they are its arguments. */
function argumentsDigest(args: Record<string, unknown>): string {
  return normalizedArgsDigest(args) ?? jsonDigest(args);
}
