/**
 * Instrumented builds (issue 19): explanations name the rules and lines that produced a result,
 * coverage marks what tests never reach, and an instrumented module never loads to serve.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  buildPolicy,
  type ExplainNode,
  type ExplainTree,
  explainEvaluation,
  loadCompiledPolicy,
  type RegoSource,
} from "../../../src/rego/index.ts";
import { runTests, type TestRun } from "../../../src/rego/tester.ts";
import { repoRoot } from "../../support/paths.ts";

const policy = `package shop

import rego.v1

default decision := {"allow": false, "reasons": []}

decision := {"allow": true, "reasons": []} if count(refusals) == 0

decision := {"allow": false, "reasons": sort(refusals)} if count(refusals) > 0

refusals contains sprintf("amount %v is over the limit %v", [amount, limit]) if {
	amount := input.amount
	limit := data.limits[input.role]
	amount > limit
}

refusals contains "weekend" if input.day in {"sat", "sun"}

never_used if input.nothing == 42
`;

const sources: RegoSource[] = [{ file: "shop.rego", source: policy }];
const data = { limits: { clerk: 100, manager: 1000 } };

/** Every rule of a tree, depth first. */
function nodesOf(nodes: readonly ExplainNode[]): ExplainNode[] {
  return nodes.flatMap((n) => [n, ...nodesOf(n.steps.flatMap((s) => s.because))]);
}

function allNodes(tree: ExplainTree): ExplainNode[] {
  return nodesOf([...(tree.answer ? [tree.answer] : []), ...tree.tried, ...tree.rest]);
}

/** No rule shown twice in a tree, and no expression twice in a rule. */
function expectNoRepeats(tree: ExplainTree): void {
  const rules = allNodes(tree).map((n) => `${n.file}:${n.line}`);
  expect(rules.length).toBe(new Set(rules).size);
  for (const node of allNodes(tree)) {
    const lines = node.steps.map((s) => s.line);
    expect(lines.length, `${node.head}: ${lines.join(",")}`).toBe(new Set(lines).size);
  }
}

describe("explaining an evaluation", () => {
  it("leads with the rule that decided and the reason under it, with the values it saw", async () => {
    const explanation = await explainEvaluation(
      sources,
      { amount: 250, role: "clerk", day: "mon" },
      { entrypoint: "shop/decision", data },
    );
    expect(explanation.result).toEqual([
      { result: { allow: false, reasons: ["amount 250 is over the limit 100"] } },
    ]);
    const { tree } = explanation;
    expectNoRepeats(tree);
    expect(tree.decided_by).toBe("rule");
    // The decision came from the rule on line 9, not the default and not line 7.
    expect(tree.answer).toMatchObject({ rule: "data.shop.decision", line: 9, held: true });
    const step = tree.answer?.steps[0];
    expect(step).toMatchObject({ line: 9, held: true });
    expect(step?.values).toEqual(
      expect.arrayContaining([
        { term: "count(refusals)", value: 1 },
        { term: "refusals", value: ["amount 250 is over the limit 100"] },
      ]),
    );
    const refusal = step?.because[0];
    expect(refusal).toMatchObject({ rule: "data.shop.refusals", file: "shop.rego", line: 11, held: true });
    expect(refusal?.head).toMatch(/^refusals contains sprintf/);
    expect(refusal?.steps.map((s) => [s.line, s.text, s.held])).toEqual([
      [12, "amount := input.amount", true],
      [13, "limit := data.limits[input.role]", true],
      [14, "amount > limit", true],
    ]);
    expect(refusal?.steps[1]?.values).toEqual(
      expect.arrayContaining([
        { term: "data.limits[input.role]", value: 100 },
        { term: "input.role", value: "clerk" },
        { term: "limit", value: 100 },
      ]),
    );
    expect(tree.chains).toHaveLength(1);
    expect(tree.chains[0]).toMatch(
      /^refusals contains sprintf\(.* \(shop\.rego:11\) ← line 14 amount > limit$/,
    );
    // The weekend rule did not hold: it is among the rules tried under the reason's expression.
    expect(allNodes(tree).find((n) => n.line === 17)).toMatchObject({ held: false });
  });

  it("for an allow, names the rule that allowed and the refusals checked that did not hold", async () => {
    const { tree } = await explainEvaluation(
      sources,
      { amount: 5, role: "clerk", day: "mon" },
      { entrypoint: "shop/decision", data },
    );
    expectNoRepeats(tree);
    expect(tree.answer).toMatchObject({ line: 7, held: true });
    expect(tree.answer?.steps[0]?.values).toContainEqual({ term: "count(refusals)", value: 0 });
    const checked = tree.answer?.steps[0]?.because ?? [];
    expect(checked.map((n) => [n.line, n.held, n.steps.at(-1)?.line, n.steps.at(-1)?.held])).toEqual([
      [11, false, 14, false],
      [17, false, 17, false],
    ]);
    expect(checked[0]?.steps.at(-1)?.values).toEqual(
      expect.arrayContaining([
        { term: "amount", value: 5 },
        { term: "limit", value: 100 },
      ]),
    );
    expect(checked[1]?.steps[0]?.values).toContainEqual({ term: "input.day", value: "mon" });
  });

  it("says when the default decided, and which rules were tried", async () => {
    const gate =
      'package gate\n\ndefault allow := false\n\nallow if input.admin\n\nallow if {\n\tsome g in input.groups\n\tg == "ops"\n}\n';
    const none = await explainEvaluation(
      [{ file: "gate.rego", source: gate }],
      { admin: false, groups: ["dev", "qa"] },
      { entrypoint: "gate/allow" },
    );
    expect(none.result).toEqual([{ result: false }]);
    expectNoRepeats(none.tree);
    expect(none.tree.decided_by).toBe("default");
    expect(none.tree.answer).toMatchObject({ rule: "data.gate.allow", line: 3, default: true, steps: [] });
    expect(none.tree.tried.map((n) => [n.line, n.held])).toEqual([
      [5, false],
      [7, false],
    ]);
    expect(none.tree.tried[0]?.steps).toMatchObject([
      { line: 5, held: false, values: [{ term: "input.admin", value: false }] },
    ]);
    expect(none.tree.tried[1]?.steps.map((s) => [s.line, s.held])).toEqual([
      [8, true],
      [9, false],
    ]);
  });

  it("shows comprehensions' values, and bounds long values", async () => {
    const policy = `package big

allow if {
	count({r | some r in input.roles; startswith(r, "admin")}) > 0
	count(input.items) > 3
}
`;
    const items = Array.from({ length: 100 }, (_, i) => "x".repeat(300) + String(i));
    const { tree } = await explainEvaluation(
      [{ file: "big.rego", source: policy }],
      { roles: ["admin-eu", "dev"], items },
      { entrypoint: "big/allow" },
    );
    expect(tree.answer?.steps[0]?.values).toContainEqual({
      term: '{r | some r in input.roles; startswith(r, "admin")}',
      value: ["admin-eu"],
    });
    const shown = tree.answer?.steps[1]?.values.find((v) => v.term === "input.items")?.value;
    expect(Array.isArray(shown) && shown.length).toBe(21);
    expect(JSON.stringify(shown).length).toBeLessThan(6000);
  });
});

describe("an instrumented build", () => {
  it("never loads without a trace sink, so it cannot serve", async () => {
    const built = buildPolicy(sources, { entrypoints: ["shop/decision"], instrument: true });
    expect(built.errors).toEqual([]);
    await expect(loadCompiledPolicy({ wasm: built.wasm!, data })).rejects.toThrow(/instrumented build/);
    await expect(
      loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins, data }),
    ).rejects.toThrow(/instrumented build/);
  });

  it("decides exactly as the plain build on the sample policy", async () => {
    const dir = path.join(repoRoot, "policies/writ");
    const files = (await readdir(dir)).filter((f) => f.endsWith(".rego") && !f.endsWith("_test.rego"));
    const sample = await Promise.all(
      files.map(async (file) => ({ file, source: await readFile(path.join(dir, file), "utf8") })),
    );
    const plain = buildPolicy(sample, { entrypoints: ["writ/decision"] });
    const traced = buildPolicy(sample, { entrypoints: ["writ/decision"], instrument: true });
    const a = await loadCompiledPolicy({ wasm: plain.wasm!, hostBuiltins: plain.hostBuiltins });
    let events = 0;
    const b = await loadCompiledPolicy({
      wasm: traced.wasm!,
      hostBuiltins: traced.hostBuiltins,
      trace: () => events++,
    });
    const subjects = [
      { id: "alice", tenant: "demo", roles: ["developer"] },
      { id: "bob", tenant: "demo", roles: ["maintainer", "treasurer"] },
    ];
    const actions = [
      { name: "repo.read", args: { workspace: "ws-demo", path: "/srv/docs/README.md" } },
      { name: "repo.read", args: { workspace: "ws-demo", path: "/etc/passwd" } },
      { name: "repo.propose_edit", args: { workspace: "ws-demo", path: "/srv/docs/a.md", base_hash: "x" } },
      { name: "payments.create_draft", args: { account: "acct-alice", amount: 5000 } },
      { name: "unknown.tool", args: {} },
    ];
    const resources = [
      { type: "workspace", id: "ws-demo", known: true, owner: "alice", tenant: "demo", attributes: {} },
      { type: "workspace", id: "ws-x", known: false, attributes: {} },
    ];
    for (const subject of subjects)
      for (const action of actions)
        for (const resource of resources)
          for (const phase of ["call", "discover"]) {
            const input = { subject, action, resource, context: { phase } };
            expect(b.evaluate(input, "writ/decision")).toEqual(a.evaluate(input, "writ/decision"));
          }
    expect(events).toBeGreaterThan(0);
  });
});

describe("test coverage", () => {
  it("marks a rule no test reaches as uncovered, in OPA's report shape", async () => {
    const tests = `package shop_test

import rego.v1

test_clerk_over_the_limit if {
	d := data.shop.decision with input as {"amount": 250, "role": "clerk", "day": "mon"}
	d.allow == false
}
`;
    const run: TestRun = await runTests([...sources, { file: "shop_test.rego", source: tests }], data, {
      coverage: true,
    });
    expect(run.results?.map((r) => r.status)).toEqual(["PASS"]);
    if (!run.coverage) throw new Error("no coverage");
    const report = run.coverage.report;
    const shop = report.files["shop.rego"]!;
    const rows = (ranges: Array<{ start: { row: number }; end: { row: number } }> = []) =>
      ranges.flatMap((r) => Array.from({ length: r.end.row - r.start.row + 1 }, (_, i) => r.start.row + i));
    // Line 19 (never_used, which nothing refers to) and the default (line 5) are never reached;
    // the expressions of lines 7 and 17 are evaluated (they do not hold), so their lines count.
    expect(rows(shop.not_covered)).toEqual([5, 19]);
    expect(rows(shop.covered)).toEqual([7, 9, 11, 12, 13, 14, 17]);
    expect(shop.covered_lines + shop.not_covered_lines).toBe(
      rows(shop.covered).length + rows(shop.not_covered).length,
    );
    expect(report.coverage).toBeGreaterThan(0);
    expect(report.coverage).toBeLessThan(100);
    expect(run.coverage?.uncoveredRules.map((r) => `${r.line} ${r.rule}`)).toEqual([
      "5 data.shop.decision",
      "7 data.shop.decision",
      "17 data.shop.refusals",
      "19 data.shop.never_used",
    ]);
  });
});
