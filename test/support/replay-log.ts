/**
 * A decision log to replay, written quickly: realistic policy inputs for the sample policy's tools
 * (repository reads, searches, edits, payment drafts and commits, by owners and others), decided
 * by a loaded engine, redacted as the log redacts them, and appended straight through the store
 * in batches with timestamps spread over a time span. A few refusals decided before the policy
 * (`writ/intake`) are mixed in, as in a real log. Used by test/replay/ and bench/replay.ts.
 */

import { WritError } from "../../src/core/errors.ts";
import type { PolicyInput, SideEffect } from "../../src/core/types.ts";
import { evaluationEntry, redact, refusalEntry } from "../../src/decisionlog/index.ts";
import type { PolicyEngine } from "../../src/policy/index.ts";
import type { NewDecisionEntry, Store } from "../../src/store/types.ts";

/** What the test needs to know of each entry written. */
export interface WrittenEntry {
  decision_id: string;
  timestamp: string;
  path: string;
  subject: string;
  action: string;
  decision: string;
  /** Whether redaction erased or masked part of the stored input. */
  redacted: boolean;
}

export interface LogSpec {
  entries: number;
  /** The first entry's time; the others follow evenly over `spanMs`. */
  from: Date;
  spanMs: number;
  /** Entries per append (one transaction each); default 500. */
  batch?: number;
  /** Seed of the deterministic mix. */
  seed?: number;
}

const WORKSPACE = {
  read_paths: ["README.md", "src/sum.ts"],
  edit_paths: ["src/sum.ts"],
  files: { "README.md": "h-readme", "src/sum.ts": "h-sum" },
  reads: { "src/sum.ts": ["h-sum"] },
  proposals: [],
};

const SECRET = "AKIAIOSFODNN7EXAMPLE";

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Call {
  action: string;
  side_effect: SideEffect;
  classification: string;
  args: Record<string, unknown>;
  resource: PolicyInput["resource"];
}

function workspace(owner: string): PolicyInput["resource"] {
  return {
    type: "workspace",
    id: "ws-demo",
    known: true,
    owner,
    tenant: "demo",
    revision: "3",
    attributes: WORKSPACE,
  };
}

/** The calls the mix draws from, each with the share it gets. */
const calls: Array<{ weight: number; call: (pick: () => number) => Call }> = [
  { weight: 30, call: () => repo("repo.read", { workspace: "ws-demo", path: "README.md" }) },
  { weight: 8, call: () => repo("repo.read", { workspace: "ws-demo", path: ".env" }) },
  {
    weight: 20,
    call: (pick) =>
      repo("repo.search", { workspace: "ws-demo", query: pick() < 0.1 ? `key ${SECRET}` : "sum" }),
  },
  {
    weight: 10,
    call: () =>
      repo(
        "repo.propose_edit",
        { workspace: "ws-demo", path: "src/sum.ts", base_hash: "h-sum", patch: "+1" },
        "reversible",
      ),
  },
  {
    weight: 5,
    call: () =>
      repo(
        "repo.apply_edit",
        { workspace: "ws-demo", path: "src/sum.ts", base_hash: "h-sum", patch: "+1" },
        "committing",
      ),
  },
  {
    weight: 12,
    call: (pick) =>
      payment(
        "create_payment_draft",
        { account: "acct-1", amount: Math.round(pick() * 300), currency: "EUR" },
        "reversible",
      ),
  },
  { weight: 5, call: () => payment("commit_payment", { draft_id: "d-1" }, "committing") },
  { weight: 3, call: () => ({ ...repo("repo.delete", { workspace: "ws-demo" }), action: "repo.delete" }) },
];

function repo(action: string, args: Record<string, unknown>, side_effect: SideEffect = "none"): Call {
  return { action, side_effect, classification: "internal", args, resource: workspace("alice") };
}

function payment(action: string, args: Record<string, unknown>, side_effect: SideEffect): Call {
  return {
    action,
    side_effect,
    classification: "confidential",
    args,
    resource: {
      type: "payment_account",
      id: "acct-1",
      known: true,
      owner: "alice",
      tenant: "demo",
      revision: "1",
      attributes: {},
    },
  };
}

const subjects = [
  { id: "alice", weight: 70, roles: ["developer"] },
  { id: "bob", weight: 20, roles: ["developer"] },
  { id: "tess", weight: 10, roles: ["treasurer"] },
];

function pickWeighted<T extends { weight: number }>(items: readonly T[], r: number): T {
  const total = items.reduce((sum, i) => sum + i.weight, 0);
  let at = r * total;
  for (const item of items) {
    at -= item.weight;
    if (at < 0) return item;
  }
  return items[items.length - 1]!;
}

/** Writes `spec.entries` entries decided by `engine` into `store`; answers what it wrote. */
export async function writeReplayLog(
  store: Store,
  engine: PolicyEngine,
  spec: LogSpec,
): Promise<WrittenEntry[]> {
  const pick = random(spec.seed ?? 19);
  const batchSize = spec.batch ?? 500;
  const written: WrittenEntry[] = [];
  const step = spec.entries > 1 ? spec.spanMs / (spec.entries - 1) : 0;
  let batch: NewDecisionEntry[] = [];
  for (let i = 0; i < spec.entries; i++) {
    const at = new Date(spec.from.getTime() + Math.round(i * step));
    const subject = pickWeighted(subjects, pick());
    const decisionId = `d-${String(i).padStart(7, "0")}-${Math.floor(pick() * 1e9).toString(36)}`;
    const requestId = `r-${i}`;
    const who = { id: subject.id, tenant: "demo" };
    let entry: NewDecisionEntry;
    if (pick() < 0.02) {
      // A malformed call refused before the policy ran.
      const error = new WritError("invalid_argument", "arguments do not match the contract", {
        suggestedFix: "fix the arguments",
      });
      entry = newEntry(
        {
          ...refusalEntry({
            path: "writ/intake",
            input: { raw: "{" },
            policyRevision: engine.revision ?? "none",
            subject: who,
            action: null,
            resource: null,
            error,
            requestId,
          }),
          decision_id: decisionId,
        },
        at,
      );
    } else {
      const call = pickWeighted(calls, pick()).call(pick);
      const input: PolicyInput = {
        subject: {
          id: subject.id,
          tenant: "demo",
          roles: subject.roles,
          scopes: [],
          issuer: "https://idp.example",
          claims: {},
        },
        action: {
          name: call.action,
          version: "1",
          side_effect: call.side_effect,
          idempotency: "natural",
          data_classification: call.classification,
          args: call.args,
          args_digest: `sha256:${i.toString(16)}`,
        },
        resource: call.resource,
        context: { time_ns: at.getTime() * 1e6, request_id: requestId, source: "canonical", phase: "call" },
      };
      const evaluated = engine.evaluate(input);
      entry = newEntry(
        evaluationEntry({
          decisionId,
          path: engine.entrypoint,
          input,
          evaluation: {
            decision: evaluated.decision,
            revision: evaluated.revision,
            failure: undefined,
            evalNs: evaluated.evalNs,
          },
          subject: who,
          action: call.action,
          resource: { type: call.resource.type, id: call.resource.id },
          requestId,
        }),
        at,
      );
    }
    written.push({
      decision_id: entry.decision_id,
      timestamp: entry.timestamp,
      path: entry.path,
      subject: subject.id,
      action: entry.action ?? "-",
      decision: entry.decision,
      redacted: entry.erased.length + entry.masked.length > 0,
    });
    batch.push(entry);
    if (batch.length >= batchSize) {
      await store.appendDecisions(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.appendDecisions(batch);
  return written;
}

/** An entry as the decision log would store it: redacted, stamped `at`. */
function newEntry(parts: ReturnType<typeof evaluationEntry>, at: Date): NewDecisionEntry {
  const { input, erased, masked } = redact(parts.input);
  return {
    decision_id: parts.decision_id ?? `d-${at.getTime()}`,
    timestamp: at.toISOString(),
    path: parts.path,
    input,
    result: parts.result,
    bundles: { writ: { revision: parts.policy_revision } },
    metrics: parts.metrics ?? {},
    erased,
    masked,
    subject: parts.subject,
    tenant: parts.tenant,
    action: parts.action,
    resource: parts.resource,
    decision: parts.decision,
    reasons: parts.reasons ?? [],
    error: parts.error ?? null,
    grant_jti: parts.grant_jti ?? null,
    approval_id: parts.approval_id ?? null,
    conditions: parts.conditions ?? [],
    request_id: parts.request_id,
  };
}
