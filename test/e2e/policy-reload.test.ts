/**
 * Policy hot reload and fail-closed evaluation end to end. The gateway watches a temp copy of
 * `policies/`; the tests rewrite its decision.rego and watch /healthz for the new revision. A
 * broken policy keeps the last good one (degraded); a policy that compiles but answers garbage
 * denies every call (`policy_unavailable` for the model, the precise failure in the log and the
 * metrics). The tests run in order.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Health, startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import {
  answerSchema,
  canonicalCall,
  expectLogVerifies,
  logEntry,
  type Outcome,
  onlyOutcome,
  README_ARGS,
  WS,
} from "./api.ts";
import { metricsText, sample } from "./metrics.ts";

let gw: TestGateway;
let alice: string;
let original: string;
let originalRevision: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  original = await readFile(gw.decisionRego, "utf8");
  const health = await gw.health();
  expect(health).toMatchObject({ status: "ok" });
  if (health.policy_revision === null) throw new Error("no policy loaded");
  originalRevision = health.policy_revision;
});

afterAll(async () => {
  await gw?.close();
});

async function read(path = "README.md", execute = false): Promise<Outcome> {
  return onlyOutcome(
    await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall("repo.read", { workspace: WS, path }),
      execute,
    }),
  );
}

async function toolNames(): Promise<string[]> {
  const answer = await gw.request("GET", "/v1/tools?family=openai", { token: alice });
  expect(answer.status).toBe(200);
  return toolNamesSchema.parse(answer.json).tools.map((t) => t.name);
}

const toolNamesSchema = z.object({ tools: z.array(z.object({ name: z.string() })) });

/** Rewrites decision.rego and waits until /healthz shows a state `accept` likes. */
async function rewrite(
  source: string,
  accept: (health: Health) => boolean,
  mode: "atomic" | "in-place" = "atomic",
): Promise<Health> {
  await gw.writePolicy(source, mode);
  return waitFor("the policy reload", async () => {
    const health = await gw.health();
    return accept(health) ? health : undefined;
  });
}

/** Waits for a new, healthy revision. */
async function reloadTo(
  source: string,
  from: string | null,
  mode: "atomic" | "in-place" = "atomic",
): Promise<string> {
  const health = await rewrite(source, (h) => h.status === "ok" && h.policy_revision !== from, mode);
  if (health.policy_revision === null) throw new Error("no revision");
  return health.policy_revision;
}

const FROZEN_RULE = `
# Added by the e2e test: reads are frozen (discovery included).
denials contains reason("reads_frozen", "reading is frozen during the maintenance window") if {
	kind == "read"
}
`;

describe("hot reload", () => {
  let frozenRevision: string;

  it("the shipped policy allows the read, logged under its revision", async () => {
    const outcome = await read();
    expect(outcome.decision).toBe("allow");
    expect((await logEntry(gw, outcome.decision_id)).bundles.writ.revision).toBe(originalRevision);
    expect(await toolNames()).toContain("repo_read");
  });

  it("a rewritten policy takes over, and the log records its revision", async () => {
    frozenRevision = await reloadTo(`${original}${FROZEN_RULE}`, originalRevision);
    expect(frozenRevision).not.toBe(originalRevision);

    const outcome = await read();
    expect(outcome.decision).toBe("deny");
    expect(outcome.reasons).toEqual([
      {
        code: "reads_frozen",
        message: "reading is frozen during the maintenance window",
        visible_to_model: true,
      },
    ]);
    expect(outcome.grant).toBeUndefined();
    const entry = await logEntry(gw, outcome.decision_id);
    expect(entry.bundles.writ.revision).toBe(frozenRevision);
    expect(entry.reasons.map((r) => r.code)).toEqual(["reads_frozen"]);

    // Discovery follows the new revision (its cache is per revision).
    expect(await toolNames()).toEqual([
      "commit_payment",
      "create_payment_draft",
      "repo_apply_edit",
      "repo_finish",
      "repo_propose_edit",
    ]);
  });

  it("a broken policy leaves the last good revision in force: degraded, never open", async () => {
    const failedBefore = sample(await metricsText(gw), 'writ_policy_reloads_total{result="failed"}');
    const health = await rewrite(
      `${original}${FROZEN_RULE}\ndenials contains reason("oops" if {{{\n`,
      (h) => h.status === "degraded",
    );
    expect(health.policy_revision).toBe(frozenRevision);
    expect(health.policy_error).toMatch(/decision\.rego/);
    const answer = await gw.request("GET", "/healthz");
    expect(answer.status).toBe(200);

    const outcome = await read();
    expect(outcome.decision).toBe("deny");
    expect(outcome.reasons.map((r) => r.code)).toEqual(["reads_frozen"]);
    expect((await logEntry(gw, outcome.decision_id)).bundles.writ.revision).toBe(frozenRevision);
    expect(sample(await metricsText(gw), 'writ_policy_reloads_total{result="failed"}')).toBe(
      failedBefore + 1,
    );
  });

  it("fixing the policy clears the degraded state", async () => {
    // Rewritten in place this time: both ways of changing a file are picked up.
    const health = await rewrite(original, (h) => h.status === "ok", "in-place");
    expect(health.policy_revision).toBe(originalRevision);
    expect(health.policy_error).toBeUndefined();
    expect((await read()).decision).toBe("allow");
  });
});

describe("fail closed on a policy that compiles but cannot decide", () => {
  const garbage = [
    {
      name: "a decision that is not one of the four",
      source: 'package writ\n\nimport rego.v1\n\ndecision := {"decision": "maybe"}\n',
      failure: "policy_malformed",
    },
    {
      name: "an allow with an unknown field",
      source: 'package writ\n\nimport rego.v1\n\ndecision := {"decision": "allow", "trust_me": true}\n',
      failure: "policy_malformed",
    },
    {
      name: "an undefined decision",
      source:
        'package writ\n\nimport rego.v1\n\ndecision := {"decision": "allow", "reasons": []} if {\n\tinput.subject.id == "nobody-at-all"\n}\n',
      failure: "policy_undefined",
    },
  ] as const;

  let revision: string | null = null;

  for (const g of garbage) {
    it(`${g.name} denies every call (${g.failure})`, async () => {
      revision = await reloadTo(g.source, revision ?? originalRevision);
      const series = `writ_policy_failures_total{reason="${g.failure}"}`;
      const before = sample(await metricsText(gw), series);

      const calls = [
        canonicalCall("repo.read", README_ARGS, "r"),
        canonicalCall("repo.search", { workspace: WS, query: "sum" }, "s"),
        canonicalCall("repo.finish", { workspace: WS, summary: "done" }, "f"),
      ];
      const answer = await gw.propose(alice, { format: "canonical", payload: { calls }, execute: true });
      expect(answer.status).toBe(200);
      const results = answerSchema.parse(answer.json).results;
      expect(results).toHaveLength(3);
      for (const outcome of results) {
        expect(outcome.decision).toBe("deny");
        expect(outcome.grant).toBeUndefined();
        expect(outcome.result).toBeUndefined();
        expect(outcome.reasons).toEqual([
          {
            code: "policy_unavailable",
            message: "the policy could not decide this call, so it is denied",
            visible_to_model: true,
          },
        ]);
        expect(outcome.error?.category).toBe("policy_denied");
        expect(JSON.stringify(outcome)).not.toContain(g.failure);

        const entry = await logEntry(gw, outcome.decision_id);
        expect(entry).toMatchObject({ decision: "deny", error: g.failure, grant_jti: null });
        expect(entry.bundles.writ.revision).toBe(revision);
        expect(entry.result).toBeUndefined();
        expect(entry.reasons.map((r) => [r.code, r.visible_to_model])).toEqual([
          [g.failure, false],
          ["policy_unavailable", true],
        ]);
      }
      expect(sample(await metricsText(gw), series)).toBe(before + 3);

      // Discovery fails closed too: no tool is offered.
      expect(await toolNames()).toEqual([]);
    });
  }

  it("restoring the shipped policy allows again", async () => {
    await reloadTo(original, revision);
    expect((await gw.health()).policy_revision).toBe(originalRevision);
    expect((await read()).decision).toBe("allow");
  });
});

it("the decision log verifies across every revision", async () => {
  await expectLogVerifies(gw);
});
