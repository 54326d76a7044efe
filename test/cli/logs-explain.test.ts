/**
 * `writ logs explain` (issue 19) against the SQLite file a real gateway writes: a denial is
 * explained by the rule and line that produced its reason, from the archived revision it names.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { reloadWith } from "../support/policies.ts";
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

interface Node {
  rule: string;
  file: string;
  line: number;
  head: string;
  default: boolean;
  held: boolean;
  steps: Step[];
}
interface Step {
  file: string;
  line: number;
  text: string;
  held: boolean;
  values: Array<{ term: string; value?: unknown }>;
  because: Node[];
}
const stepSchema: z.ZodType<Step> = z.lazy(() =>
  z.object({
    file: z.string(),
    line: z.number(),
    text: z.string(),
    held: z.boolean(),
    values: z.array(z.object({ term: z.string(), value: z.unknown() })),
    because: z.array(nodeSchema),
  }),
);
const nodeSchema: z.ZodType<Node> = z.lazy(() =>
  z.object({
    rule: z.string(),
    file: z.string(),
    line: z.number(),
    head: z.string(),
    default: z.boolean(),
    held: z.boolean(),
    steps: z.array(stepSchema),
  }),
);
const explanationSchema = z.object({
  decision: z.string(),
  same_result: z.boolean(),
  notes: z.array(z.string()),
  summary: z.array(z.string()),
  explanation: z.object({
    tree: z.object({
      decided_by: z.enum(["rule", "default", "undefined"]),
      answer: nodeSchema.optional(),
      chains: z.array(z.string()),
      tried: z.array(nodeSchema),
      rest: z.array(nodeSchema),
    }),
  }),
});
type Explained = z.infer<typeof explanationSchema>;

function nodesOf(nodes: readonly Node[]): Node[] {
  return nodes.flatMap((n) => [n, ...nodesOf(n.steps.flatMap((s) => s.because))]);
}

function allNodes(e: Explained): Node[] {
  const t = e.explanation.tree;
  return nodesOf([...(t.answer ? [t.answer] : []), ...t.tried, ...t.rest]);
}

/** No rule shown twice, no expression twice in a rule, no value twice beside an expression. */
function expectNoRepeats(e: Explained): void {
  const rules = allNodes(e).map((n) => `${n.file}:${n.line}`);
  expect(rules.length).toBe(new Set(rules).size);
  for (const node of allNodes(e)) {
    expect(node.steps.length).toBe(new Set(node.steps.map((s) => s.line)).size);
    for (const step of node.steps)
      expect(step.values.length).toBe(new Set(step.values.map((v) => v.term)).size);
  }
}

/** The line of the sample policy that holds `text`, so that the tests follow edits of the policy. */
async function policyLine(text: string): Promise<number> {
  const source = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
  const line = source.split("\n").findIndex((l) => l.trim() === text);
  expect(line, text).toBeGreaterThanOrEqual(0);
  return line + 1;
}

async function explainJson(id: string): Promise<Explained> {
  const json = await runLogs(["explain", "--config", config, "--format", "json", id]);
  expect(json.stderr).toBe("");
  expect(json.code).toBe(0);
  return explanationSchema.parse(JSON.parse(json.stdout.join("\n")));
}

async function read(token: string, args: Record<string, unknown>) {
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall("repo_read", args) }, randomUUID()),
  );
  await gw.gateway.log.drain();
  return outcome;
}

describe("writ logs explain", () => {
  it("leads with the chain that denied alice's read of .env: the line, args.path and the readable paths", async () => {
    const denied = await read(await gw.token("alice"), { ...README_ARGS, path: ".env" });
    expect(denied.decision).toBe("deny");
    const line = await policyLine("not args.path in workspace.read_paths");

    const explained = await explainJson(denied.decision_id);
    expect(explained).toMatchObject({ decision: "deny", same_result: true, notes: [] });
    expectNoRepeats(explained);
    const { tree } = explained.explanation;
    expect(tree.decided_by).toBe("rule");
    expect(explained.summary).toHaveLength(1);
    expect(explained.summary[0]).toMatch(
      new RegExp(
        `^deny ← denials contains reason\\("path_not_readable".* \\(writ/decision\\.rego:\\d+\\) ← line ${line} not args\\.path in workspace\\.read_paths$`,
      ),
    );
    const denial = tree.answer?.steps[0]?.because.find((n) => n.head.includes("path_not_readable"));
    expect(denial).toMatchObject({ rule: "data.writ.denials", file: "writ/decision.rego", held: true });
    const step = denial?.steps.find((s) => s.line === line);
    expect(step).toMatchObject({ text: "not args.path in workspace.read_paths", held: true });
    expect(step?.values).toEqual(
      expect.arrayContaining([
        { term: "args.path", value: ".env" },
        { term: "workspace.read_paths", value: ["README.md", "src/sum.ts"] },
      ]),
    );

    const text = await runLogs(["explain", "--config", config, denied.decision_id]);
    expect(text.code).toBe(0);
    const out = text.stdout.join("\n");
    expect(out).toContain(`decision ${denied.decision_id} (writ/decision, policy revision `);
    expect(out).toContain("re-evaluated: the same result as logged");
    expect(out).toContain(`why: ${explained.summary[0]}`);
    expect(out).toMatch(
      new RegExp(
        `✓ ${line}  not args\\.path in workspace\\.read_paths\\n\\s+args\\.path = "\\.env"\\n\\s+workspace\\.read_paths = \\["README\\.md","src/sum\\.ts"\\]`,
      ),
    );
    // Each row once: the expression that decided, and the rule under the decision.
    expect(out.split(`✓ ${line}  not args.path in workspace.read_paths`)).toHaveLength(2);
    expect(out.split("✓ 59  count(denials) > 0").length).toBeLessThanOrEqual(2);
  });

  it("for an allow, names the rule that allowed and the denials that were checked and did not hold", async () => {
    const allowed = await read(await gw.token("alice"), README_ARGS);
    expect(allowed.decision).toBe("allow");
    const line = await policyLine("not args.path in workspace.read_paths");
    const explained = await explainJson(allowed.decision_id);
    expectNoRepeats(explained);
    const { tree } = explained.explanation;
    expect(tree.decided_by).toBe("rule");
    expect(tree.answer?.head).toMatch(/"decision": "allow"/);
    expect(explained.summary[0]).toMatch(/^allow ← else := \{ "decision": "allow".* ← line \d+ kind$/);
    const denials = tree.tried.flatMap((n) => n.steps.flatMap((s) => s.because));
    const readable = denials.find((n) => n.head.includes("path_not_readable"));
    expect(readable).toMatchObject({ held: false });
    expect(readable?.steps.at(-1)).toMatchObject({ line, held: false });
    expect(readable?.steps.at(-1)?.values).toContainEqual({ term: "args.path", value: "README.md" });
    expect(denials.every((n) => !n.held)).toBe(true);
    expect(denials.length).toBeGreaterThan(5);

    const text = (await runLogs(["explain", "--config", config, allowed.decision_id])).stdout.join("\n");
    expect(text).toContain("tried first, did not hold:");
    expect(text).toMatch(new RegExp(`✗ ${line}  not args\\.path in workspace\\.read_paths`));
  });

  it("names the rule and line that produced a denial's reason, from the archived revision", async () => {
    const denied = await read(await gw.token("mallory"), README_ARGS);
    expect(denied.decision).toBe("deny");
    const explained = await explainJson(denied.decision_id);
    expectNoRepeats(explained);
    // The reason not_owner comes from the denials rule whose body checks the owner.
    const owner = allNodes(explained).find(
      (r) =>
        r.rule === "data.writ.denials" &&
        r.held &&
        r.steps.some((b) => b.text === "input.resource.owner != input.subject.id"),
    );
    expect(owner?.head).toMatch(/^denials contains hidden_reason\("not_owner"/);
    expect(owner?.steps.at(-1)?.values).toEqual([
      { term: "input.resource.owner", value: "alice" },
      { term: "input.subject.id", value: "mallory" },
    ]);
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

// Last: it changes the gateway's policy.
describe("writ logs explain's values", () => {
  it("pass through the log's secret detectors: a value the policy decodes shows no credential", async () => {
    await reloadWith(
      gw,
      `
denials contains reason("encoded_key", "paths may not hide access keys") if {
	input.action.name == "repo.read"
	startswith(base64.decode(args.path), "AKIA")
}
`,
    );
    // base64 of an AWS access key id: the stored input holds it encoded, which no detector masks.
    const encoded = Buffer.from("AKIAIOSFODNN7EXAMPLE").toString("base64");
    const denied = await read(await gw.token("alice"), { ...README_ARGS, path: encoded });
    expect(denied.decision).toBe("deny");
    const json = await runLogs(["explain", "--config", config, "--format", "json", denied.decision_id]);
    expect(json.code, json.stderr).toBe(0);
    const explained = explanationSchema.parse(JSON.parse(json.stdout.join("\n")));
    const step = allNodes(explained)
      .flatMap((n) => n.steps)
      .find((s) => s.text === 'startswith(base64.decode(args.path), "AKIA")');
    expect(step?.values).toContainEqual({ term: "base64.decode(args.path)", value: "[masked]" });
    expect(json.stdout.join("\n")).not.toContain("AKIAIOSFODNN7EXAMPLE");
    const text = await runLogs(["explain", "--config", config, denied.decision_id]);
    expect(text.stdout.join("\n")).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });
});
