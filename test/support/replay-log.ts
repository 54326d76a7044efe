/**
 * A decision log to replay, written quickly: realistic policy inputs for the sample policy's tools
 * (repository reads, searches, edits, payment drafts and commits, by owners and others), decided
 * by a loaded engine, and appended through the decision log (redacted, written to the store in
 * batches) with timestamps spread over a time span. A few refusals decided before the policy
 * (`writ/intake`) are mixed in, as in a real log. Used by test/replay/ and bench/replay.ts.
 */

import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { WritError } from "../../src/core/errors.ts";
import type { PolicyInput, SideEffect } from "../../src/core/types.ts";
import {
  DecisionLog,
  type DecisionParts,
  evaluationEntry,
  redact,
  refusalEntry,
} from "../../src/decisionlog/index.ts";
import type { PolicyEngine } from "../../src/policy/index.ts";
import type { Store } from "../../src/store/types.ts";
import { repoRoot } from "./paths.ts";

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

/** The sample policy folder. */
export const samplePolicy = path.join(repoRoot, "policies");

/**
 * A copy of the sample policy in `dir` with one more refusal: repository search is closed (the
 * reason `search_closed`). Replayed, it changes exactly the searches that were allowed.
 */
export async function tightenedSample(dir: string): Promise<string> {
  await cp(samplePolicy, dir, { recursive: true });
  const file = path.join(dir, "writ", "decision.rego");
  const source = await readFile(file, "utf8");
  await writeFile(
    file,
    `${source}\ndenials contains reason("search_closed", "repository search is closed") if input.action.name == "repo.search"\n`,
  );
  return dir;
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
  // The log as the gateway writes it (redaction, group commit), its clock set per entry.
  let at = spec.from;
  const log = new DecisionLog(store, { now: () => at });
  let appends: Promise<unknown>[] = [];
  for (let i = 0; i < spec.entries; i++) {
    at = new Date(spec.from.getTime() + Math.round(i * step));
    const subject = pickWeighted(subjects, pick());
    const decisionId = `d-${String(i).padStart(7, "0")}-${Math.floor(pick() * 1e9).toString(36)}`;
    const requestId = `r-${i}`;
    const who = { id: subject.id, tenant: "demo" };
    let parts: DecisionParts;
    if (pick() < 0.02) {
      // A malformed call refused before the policy ran.
      const error = new WritError("invalid_argument", "arguments do not match the contract", {
        suggestedFix: "fix the arguments",
      });
      parts = {
        ...refusalEntry({
          input: { raw: "{" },
          policyRevision: engine.revision ?? "none",
          subject: who,
          action: null,
          resource: null,
          error,
          requestId,
        }),
        decision_id: decisionId,
      };
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
      parts = evaluationEntry({
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
      });
    }
    const { erased, masked } = redact(parts.input);
    written.push({
      decision_id: decisionId,
      timestamp: at.toISOString(),
      path: parts.path,
      subject: subject.id,
      action: parts.action ?? "-",
      decision: parts.decision,
      redacted: erased.length + masked.length > 0,
    });
    appends.push(log.append(parts));
    if (appends.length >= batchSize) {
      await Promise.all(appends);
      appends = [];
    }
  }
  await Promise.all(appends);
  await log.drain();
  return written;
}
