/**
 * The table of entry kinds (issue 28): every kind's builder gives an entry on its path, with the
 * fields the hand-built entries it replaced had (the bytes `writ logs verify` hashes), and every
 * kind's input still passes the log's redaction rules when it is appended.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import type { CanonicalAction, PolicyDecision, Subject } from "../../src/core/types.ts";
import { DecisionLog, ENTRY_KINDS, type EntryKind, MASK } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import type { ApprovalRecord, StoredResource } from "../../src/store/types.ts";
import { tempDir } from "../store/fixtures.ts";

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** A value the secret detectors mask wherever it appears in an input. */
const SECRET = "AKIAIOSFODNN7EXAMPLE";

const alice: Subject = {
  id: "alice",
  tenant: "acme",
  roles: ["admin", SECRET],
  scopes: [],
  issuer: "https://idp.example",
  claims: {},
};
const allow: PolicyDecision = { decision: "allow", reasons: [], conditions: [] };
const action: CanonicalAction = {
  name: "notes_pay",
  version: "1",
  side_effect: "committing",
  idempotency: "natural",
  data_classification: "internal",
  args: { note: "n1" },
  args_digest: "sha256:ab",
};
const approval = {
  id: "ap-1",
  status: "rejected",
  resolution: "rejected",
  reason: SECRET,
  reasons: [{ code: "rejected", message: "no", visible_to_model: true }],
  action,
  requester: alice,
  resource: { type: "note", id: "n1" },
  policy_revision: "rev-1",
} satisfies Partial<ApprovalRecord>;
const stored = (revision: number): StoredResource => ({
  type: "note",
  id: "n1",
  owner: "alice",
  tenant: "acme",
  revision,
  attributes: { secret: "x" },
  updated_at: "2025-06-01T12:00:00Z",
});
const refusal = new WritError("forbidden", `nope ${SECRET}`, { suggestedFix: "ask" });

/** Facts for every kind, each with the secret somewhere its entry's input shows. */
const facts = {
  decision: {
    decisionId: "d-1",
    path: "writ/decision",
    input: { subject: { id: "alice" }, token: SECRET },
    evaluation: { decision: allow, revision: "rev-1", failure: undefined, evalNs: 5 },
    subject: alice,
    action: "notes_pay",
    resource: null,
    requestId: "r-1",
  },
  intake: {
    input: { format: "canonical", session: SECRET },
    policyRevision: "rev-1",
    subject: null,
    action: null,
    resource: null,
    error: refusal,
    requestId: "r-1",
  },
  shadow: {
    live: { decisionId: SECRET, decision: allow, revision: "rev-1" },
    shadow: { decision: allow, revision: "rev-2", failure: undefined },
    subject: alice,
    action: "notes_pay",
    resource: null,
    requestId: "r-1",
  },
  execute: {
    subject: alice,
    tool: "notes_pay",
    action: "notes_pay",
    resource: null,
    grant: { jti: "j-1", decision_id: "d-1", issued_to: SECRET, verified: true },
    requestId: "r-1",
    policyRevision: "rev-1",
    outcome: { kind: "ran", summary: { bytes: 3 } },
  },
  http: {
    surface: "GET /v1/decisions",
    source: SECRET,
    subject: null,
    error: refusal,
    requestId: "r-1",
    policyRevision: "rev-1",
  },
  tenancy: {
    surface: "GET /v1/decisions",
    actor: alice,
    target: "globex",
    everyTenant: false,
    allowed: false,
    requestId: "r-1",
    policyRevision: "rev-1",
  },
  resources: {
    surface: "PUT /v1/resources",
    actor: alice,
    resource: { type: "note", id: "n1" },
    tenant: "acme",
    outcome: { kind: "written", before: stored(1), after: stored(2) },
    requestId: "r-1",
    policyRevision: "rev-1",
  },
  approvalTransition: {
    approval,
    from: "pending",
    actor: alice,
    error: null,
    requestId: "r-1",
  },
  approvalCollected: {
    approval,
    release: { decision_id: "d-1", policy_revision: "rev-1", decision: allow },
    grant: { jti: SECRET, expires_at: "2025-06-01T13:00:00Z" },
    requestId: "r-1",
  },
  approvalRefused: {
    attempt: "approve",
    approvalId: "ap-1",
    approver: alice,
    error: refusal,
    requestId: "r-1",
    policyRevision: "rev-1",
  },
  console: {
    event: "sign_in",
    actor: alice,
    session: { idHash: "f".repeat(64), expiresAt: new Date("2025-06-01T20:00:00Z") },
    code: "console_sign_in",
    message: "alice signed in to the console",
    error: null,
    requestId: "r-1",
    policyRevision: "rev-1",
  },
} satisfies {
  [K in keyof typeof ENTRY_KINDS]: (typeof ENTRY_KINDS)[K] extends EntryKind<infer F> ? F : never;
};

/** `kind.build(facts)` for a kind chosen by name (the table's kinds each take their own facts). */
function build(name: keyof typeof ENTRY_KINDS) {
  const kind: EntryKind<never> = ENTRY_KINDS[name];
  return kind.build(facts[name] as never);
}

describe("the table of entry kinds", () => {
  it("gives each kind its own writ/* path (approvals' three share one), decisions the entrypoint", () => {
    for (const name of Object.keys(ENTRY_KINDS) as Array<keyof typeof ENTRY_KINDS>) {
      const kind = ENTRY_KINDS[name];
      expect(build(name).path, name).toBe(kind.path ?? "writ/decision");
      expect(kind.redaction.length, name).toBeGreaterThan(0);
    }
    const paths = Object.values(ENTRY_KINDS).flatMap((k) => (k.path === null ? [] : [k.path]));
    expect(new Set(paths)).toEqual(
      new Set([
        "writ/intake",
        "writ/shadow",
        "writ/execute",
        "writ/http",
        "writ/tenancy",
        "writ/resources",
        "writ/approvals",
        "writ/console",
      ]),
    );
  });

  it("redacts every kind's input with the log's rules when it is appended", async () => {
    const store = tmp.track(await SqliteStore.open(tmp.file()));
    const log = new DecisionLog(store);
    for (const name of Object.keys(ENTRY_KINDS) as Array<keyof typeof ENTRY_KINDS>) {
      const { decision_id } = await log.append(build(name));
      const entry = await log.get(decision_id);
      expect(JSON.stringify(entry?.input), name).not.toContain(SECRET);
      expect(entry?.masked.length, name).toBeGreaterThan(0);
    }
    expect(await log.verify()).toMatchObject({ ok: true, entries: Object.keys(ENTRY_KINDS).length });
    expect(MASK).toBe("[masked]");
  });
});

describe("the entries built by hand before the table, field for field", () => {
  const actor = { id: "alice", tenant: "acme", roles: ["admin", SECRET] };

  it("tenancy: a reach refused, on the target tenant's record; every tenant on none", () => {
    expect(build("tenancy")).toEqual({
      path: "writ/tenancy",
      input: { surface: "GET /v1/decisions", actor, target_tenant: "globex" },
      policy_revision: "rev-1",
      subject: "alice",
      tenant: "globex",
      action: "GET /v1/decisions",
      resource: null,
      decision: "deny",
      reasons: [
        {
          code: "cross_tenant_refused",
          message: "alice of tenant acme asked for tenant globex without a platform role",
          visible_to_model: false,
        },
      ],
      error: "forbidden",
      request_id: "r-1",
    });
    const every = ENTRY_KINDS.tenancy.build({
      ...facts.tenancy,
      target: "*",
      everyTenant: true,
      allowed: true,
    });
    expect(every).toMatchObject({ tenant: null, decision: "allow", error: null });
    expect(every.reasons?.[0]?.code).toBe("platform_reach");
  });

  it("resources: a write with both versions (attributes by digest), a refused one on the writer's tenant", () => {
    const written = build("resources");
    expect(Object.keys(written.input as object)).toEqual(["actor", "resource", "before", "after"]);
    expect(written).toMatchObject({
      path: "writ/resources",
      input: {
        actor,
        resource: { type: "note", id: "n1" },
        before: { owner: "alice", tenant: "acme", revision: 1, attributes_digest: expect.any(String) },
        after: { revision: 2 },
      },
      subject: "alice",
      tenant: "acme",
      action: "PUT /v1/resources",
      decision: "allow",
    });
    expect(JSON.stringify(written)).not.toContain('"secret"');
    const refused = ENTRY_KINDS.resources.build({
      ...facts.resources,
      tenant: "globex",
      outcome: { kind: "held_elsewhere" },
    });
    expect(refused).toEqual({
      path: "writ/resources",
      input: { actor, resource: { type: "note", id: "n1" }, tenant: "globex" },
      policy_revision: "rev-1",
      subject: "alice",
      tenant: "acme",
      action: "PUT /v1/resources",
      resource: { type: "note", id: "n1" },
      decision: "deny",
      reasons: [
        {
          code: "resource_held_elsewhere",
          message: "another tenant holds this name",
          visible_to_model: false,
        },
      ],
      error: "conflict",
      request_id: "r-1",
    });
  });

  it("approvals: a transition, a grant collected and a refused decision", () => {
    const digestOnly = { name: "notes_pay", version: "1", args_digest: "sha256:ab" };
    expect(build("approvalTransition")).toEqual({
      path: "writ/approvals",
      input: {
        approval: { id: "ap-1", from: "pending", to: "rejected", resolution: "rejected" },
        actor: { id: "alice", roles: ["admin", SECRET] },
        reason: SECRET,
        action: digestOnly,
      },
      policy_revision: "rev-1",
      subject: "alice",
      tenant: "acme",
      action: "notes_pay",
      resource: { type: "note", id: "n1" },
      decision: "deny",
      reasons: approval.reasons,
      error: null,
      approval_id: "ap-1",
      request_id: "r-1",
    });
    expect(build("approvalCollected")).toMatchObject({
      path: "writ/approvals",
      input: {
        approval: { id: "ap-1", from: "rejected", to: "rejected" },
        collected: { jti: SECRET, expires_at: "2025-06-01T13:00:00Z", decision_id: "d-1" },
        action: digestOnly,
      },
      decision: "allow",
      reasons: [{ code: "approval_grant_collected" }],
      grant_jti: SECRET,
      approval_id: "ap-1",
    });
    const long = "x".repeat(201);
    const refused = ENTRY_KINDS.approvalRefused.build({ ...facts.approvalRefused, approvalId: long });
    expect(refused).toMatchObject({
      input: { attempt: "approve", approval: { id: "x".repeat(200) }, actor },
      action: "approve approval",
      decision: "deny",
      error: "forbidden",
      approval_id: null,
      reasons: [{ code: "approval_decision_refused", message: refusal.message, visible_to_model: false }],
    });
  });

  it("console: a sign-in names a prefix of the session's hash; a refused one no session", () => {
    expect(build("console")).toEqual({
      path: "writ/console",
      input: {
        surface: "console",
        event: "sign_in",
        actor,
        session: "f".repeat(16),
        expires_at: "2025-06-01T20:00:00.000Z",
      },
      policy_revision: "rev-1",
      subject: "alice",
      tenant: "acme",
      action: "console.sign_in",
      resource: null,
      decision: "allow",
      reasons: [
        { code: "console_sign_in", message: "alice signed in to the console", visible_to_model: false },
      ],
      error: null,
      request_id: "r-1",
    });
    const { session: _session, ...refusedFacts } = facts.console;
    const refused = ENTRY_KINDS.console.build({ ...refusedFacts, actor: null, error: refusal });
    expect(refused).toMatchObject({
      input: { surface: "console", event: "sign_in", actor: null },
      subject: null,
      decision: "deny",
      error: "forbidden",
    });
    expect(Object.keys(refused.input as object)).toEqual(["surface", "event", "actor"]);
  });
});
