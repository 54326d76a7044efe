/**
 * `writ logs explain` (issue 19) against the SQLite file a real gateway writes: a denial is
 * explained by the rule and line that produced its reason, from the archived revision it names.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { runLogs, writeStoreConfig } from "./logs-helpers.ts";

let gw: TestGateway;
let folder: string;
let config: string;

beforeAll(async () => {
  gw = await startTestGateway();
  folder = await mkdtemp(path.join(tmpdir(), "writ-explain-"));
  config = await writeStoreConfig(gw, folder);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await rm(folder, { recursive: true, force: true });
});

const explanationSchema = z.object({
  decision: z.string(),
  same_result: z.boolean(),
  notes: z.array(z.string()),
  explanation: z.object({
    rules: z.array(
      z.object({
        rule: z.string(),
        file: z.string(),
        line: z.number(),
        text: z.string(),
        because: z.array(
          z.object({ line: z.number(), text: z.string(), bindings: z.record(z.string(), z.unknown()) }),
        ),
      }),
    ),
  }),
});

describe("writ logs explain", () => {
  it("names the rule and line that produced a denial's reason, from the archived revision", async () => {
    const mallory = await gw.token("mallory");
    const denied = onlyOutcome(
      await gw.propose(
        mallory,
        { format: "canonical", payload: canonicalCall("repo_read", README_ARGS) },
        randomUUID(),
      ),
    );
    expect(denied.decision).toBe("deny");
    await gw.gateway.log.drain();

    const json = await runLogs(["explain", "--config", config, "--format", "json", denied.decision_id]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const explained = explanationSchema.parse(JSON.parse(json.stdout.join("\n")));
    expect(explained).toMatchObject({ decision: "deny", same_result: true, notes: [] });
    // The reason not_owner comes from the denials rule whose body checks the owner.
    const owner = explained.explanation.rules.find(
      (r) =>
        r.rule === "data.writ.denials" &&
        r.because.some((b) => b.text === "input.resource.owner != input.subject.id"),
    );
    expect(
      owner,
      JSON.stringify(explained.explanation.rules.map((r) => `${r.line} ${r.rule}`)),
    ).toBeDefined();
    expect(owner?.text).toMatch(/^denials contains hidden_reason\("not_owner"/);
    expect(owner?.file).toBe("writ/decision.rego");

    const text = await runLogs(["explain", "--config", config, denied.decision_id]);
    expect(text.code).toBe(0);
    const out = text.stdout.join("\n");
    expect(out).toContain(`decision ${denied.decision_id} (writ/decision, policy revision `);
    expect(out).toContain("re-evaluated: the same result as logged");
    expect(out).toMatch(new RegExp(`writ/decision\\.rego:${owner?.line}  data\\.writ\\.denials`));
  });

  it("says when the stored input was redacted, so that the explanation may differ", async () => {
    const alice = await gw.token("alice");
    // A path holding what the secret detectors take for an AWS access key: masked in the log.
    const secretPath = "AKIAIOSFODNN7EXAMPLE.md";
    const denied = onlyOutcome(
      await gw.propose(alice, {
        format: "canonical",
        payload: canonicalCall("repo_read", { ...README_ARGS, path: secretPath }),
      }),
    );
    await gw.gateway.log.drain();
    const json = await runLogs(["explain", "--config", config, "--format", "json", denied.decision_id]);
    expect(json.code).toBe(0);
    const explained = z
      .object({ masked: z.array(z.string()), notes: z.array(z.string()) })
      .parse(JSON.parse(json.stdout.join("\n")));
    expect(explained.masked.length).toBeGreaterThan(0);
    expect(explained.notes.join(" ")).toContain(`masked: ${explained.masked.join(", ")}`);
    expect(JSON.stringify(JSON.parse(json.stdout.join("\n")))).not.toContain(secretPath);
  });

  it("says what cannot be explained: an unknown id, a refusal the policy never saw", async () => {
    const unknown = await runLogs(["explain", "--config", config, "no-such-decision"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no decision no-such-decision");
    const rid = randomUUID();
    await gw.request("POST", "/v1/proposals", {
      token: "not-a-token",
      body: { format: "canonical", payload: {} },
      requestId: rid,
    });
    await gw.gateway.log.drain();
    const page = await gw.gateway.log.query({}, 20);
    const refusal = page.entries.find((e) => e.caller_request_id === rid);
    expect(refusal).toBeDefined();
    const refused = await runLogs(["explain", "--config", config, refusal?.decision_id ?? ""]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("was not decided by a policy");
  });
});
