/**
 * A gateway for the unit tests of the stages, approvals and the policy engine: no HTTP server,
 * an in-memory SQLite store, a small policy compiled by Writ's own compiler (PolicyEngine →
 * buildPolicy), in-memory grant keys, and one identity issuer whose key the test signs with.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CompiledContractRegistry } from "../../src/contracts/index.ts";
import { WritError } from "../../src/core/errors.ts";
import type { Gateway } from "../../src/core/gateway.ts";
import type { InProcessHandler } from "../../src/core/handlers.ts";
import type { Subject } from "../../src/core/types.ts";
import { DecisionLog } from "../../src/decisionlog/index.ts";
import { CredentialResolver } from "../../src/dispatch/index.ts";
import { GrantSigner } from "../../src/grants/index.ts";
import { IdentityVerifier } from "../../src/identity/index.ts";
import { Limits, type LimitsConfigInput, limitsConfigSchema } from "../../src/limits/index.ts";
import { GatewayMetrics } from "../../src/observability/metrics.ts";
import { PolicyEngine } from "../../src/policy/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import type { DecisionLogEntry } from "../../src/store/types.ts";
import { jwksOf, makeKey, sign, type TestKey } from "../identity/helpers.ts";

export const ISSUER = "https://idp.unit.test";
export const TENANT = "t1";

/**
 * notes.read: allow; notes.pay: allow with `amount` ≤ 10; notes.write: an approval by someone
 * other than the requester; notes.broken: a malformed decision (fails closed); anything else:
 * deny with a reason the model may see and one it may not.
 */
export const POLICY = `package writ

import rego.v1

default decision := {
	"decision": "deny",
	"reasons": [
		{"code": "no_rule", "message": "no rule allows this", "visible_to_model": true},
		{"code": "internal_note", "message": "for the operator", "visible_to_model": false},
	],
	"conditions": [],
}

decision := {"decision": "allow", "reasons": [], "conditions": []} if input.action.name == "notes.read"

decision := {
	"decision": "allow_with_conditions",
	"reasons": [],
	"conditions": [{"type": "max_value", "path": "/amount", "max": 10}],
} if input.action.name == "notes.pay"

decision := {"decision": "allow", "reasons": [], "conditions": []} if {
	input.action.name == "notes.write"
	approved_by_other
}

decision := {
	"decision": "require_approval",
	"reasons": [{"code": "approval_required", "message": "a lead must approve", "visible_to_model": true}],
	"conditions": [],
	"approval": {"approver_roles": ["lead"], "ttl_seconds": 60},
} if {
	input.action.name == "notes.write"
	not approved_by_other
}

decision := {"decision": "nonsense"} if input.action.name == "notes.broken"

approved_by_other if input.context.approval.approver.id != input.subject.id
`;

function tool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    version: "1",
    description: `the ${name} tool`,
    side_effect: "none",
    idempotency: "natural",
    data_classification: "internal",
    resource: { type: "note", id: "/note" },
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["note"],
      properties: { note: { type: "string" }, amount: { type: "number" }, text: { type: "string" } },
    },
    backend: { kind: "inprocess", handler: "notes" },
    model_views: [{ family: "default", name: name.replace(".", "_") }],
    ...extra,
  };
}

export const TOOLS = [
  tool("notes.read"),
  tool("notes.pay", { side_effect: "reversible" }),
  tool("notes.write", { side_effect: "committing", idempotency: "none" }),
  tool("notes.secret"),
  tool("notes.broken"),
];

/** The in-process backend: echoes its arguments; counts its runs. */
export function notesHandler(runs: { count: number }): InProcessHandler {
  return async ({ args, resource }) => {
    runs.count += 1;
    return {
      summary: `ran with ${JSON.stringify(args)}`,
      structured_content: { args, revision: resource?.revision ?? null },
    };
  };
}

export interface UnitGateway {
  gw: Gateway;
  store: SqliteStore;
  runs: { count: number };
  /** A bearer header for `sub` (tenant t1) with `roles`. */
  bearer(sub: string, roles?: string[]): Promise<string>;
  subject(sub: string, roles?: string[]): Subject;
  /** Every log entry, in order (after the log's queue drained). */
  entries(): Promise<DecisionLogEntry[]>;
  close(): Promise<void>;
}

export async function unitGateway(
  options: { policy?: string; now?: () => Date; limits?: LimitsConfigInput } = {},
): Promise<UnitGateway> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "writ-unit-"));
  await writeFile(path.join(dir, "decision.rego"), options.policy ?? POLICY);
  const policy = new PolicyEngine();
  await policy.loadDirectory(dir);
  const store = await SqliteStore.open(":memory:");
  await store.putResource({
    type: "note",
    id: "n1",
    owner: "alice",
    tenant: TENANT,
    attributes: { color: "blue" },
  });
  const key: TestKey = await makeKey();
  const identity = new IdentityVerifier({
    issuers: [{ issuer: ISSUER, audience: "writ", jwks: jwksOf(key) }],
  });
  const runs = { count: 0 };
  const log = new DecisionLog(store);
  const gw: Gateway = {
    contracts: CompiledContractRegistry.fromConfig(TOOLS),
    identity,
    store,
    policy,
    grants: await GrantSigner.create({ issuer: "writ-unit" }),
    log,
    handlers: new Map([["notes", notesHandler(runs)]]),
    metrics: new GatewayMetrics(),
    executorId: "writ-unit-executor",
    credentials: new CredentialResolver(),
    ...(options.now ? { now: options.now } : {}),
    ...(options.limits ? { limits: new Limits(limitsConfigSchema.parse(options.limits)) } : {}),
  };
  return {
    gw,
    store,
    runs,
    bearer: async (sub, roles = []) => `Bearer ${await sign(key, { iss: ISSUER, sub, tnt: TENANT, roles })}`,
    subject: (sub, roles = []) => ({
      id: sub,
      tenant: TENANT,
      roles,
      scopes: [],
      issuer: ISSUER,
      claims: {},
    }),
    entries: async () => {
      await log.drain();
      return (await log.query({}, 500)).entries.sort((a, b) => a.seq - b.seq);
    },
    close: async () => {
      await log.drain();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The WritError `p` rejects with (fails the test when it resolves or throws anything else). */
export async function writErrorOf(p: Promise<unknown>): Promise<WritError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WritError)) throw new Error(`expected a WritError, got ${String(error)}`);
  return error;
}
