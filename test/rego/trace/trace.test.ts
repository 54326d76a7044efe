/**
 * Instrumented builds (issue 19): explanations name the rules and lines that produced a result,
 * coverage marks what tests never reach, and an instrumented module never loads to serve.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  buildPolicy,
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

describe("explaining an evaluation", () => {
  it("names the rule and line that produced a denial's reason, with the values bound", async () => {
    const explanation = await explainEvaluation(
      sources,
      { amount: 250, role: "clerk", day: "mon" },
      { entrypoint: "shop/decision", data },
    );
    expect(explanation.result).toEqual([
      { result: { allow: false, reasons: ["amount 250 is over the limit 100"] } },
    ]);
    const refusal = explanation.rules.find((r) => r.rule === "data.shop.refusals");
    expect(refusal).toMatchObject({ file: "shop.rego", line: 11, default: false });
    expect(refusal?.text).toMatch(/^refusals contains sprintf/);
    expect(refusal?.because).toEqual(
      expect.arrayContaining([
        { file: "shop.rego", line: 12, text: "amount := input.amount", bindings: { amount: 250 } },
        { file: "shop.rego", line: 13, text: "limit := data.limits[input.role]", bindings: { limit: 100 } },
        { file: "shop.rego", line: 14, text: "amount > limit", bindings: { amount: 250, limit: 100 } },
      ]),
    );
    // The decision came from the rule on line 9, not the default and not line 7.
    const decisions = explanation.rules.filter((r) => r.rule === "data.shop.decision");
    expect(decisions.map((d) => d.line)).toEqual([9]);
    // The weekend rule did not fire, and nothing explains what did not happen.
    expect(explanation.rules.some((r) => r.line === 17)).toBe(false);
  });

  it("names the default rule when it decided", async () => {
    const explanation = await explainEvaluation(
      sources,
      { amount: 5, role: "nobody", day: "sat" },
      {
        entrypoint: "shop/decision",
        data,
      },
    );
    expect(explanation.result).toEqual([{ result: { allow: false, reasons: ["weekend"] } }]);
    const weekend = explanation.rules.find((r) => r.line === 17);
    expect(weekend?.because[0]?.text).toBe('refusals contains "weekend" if input.day in {"sat", "sun"}');
    const gate = "package gate\n\ndefault allow := false\n\nallow if input.admin\n";
    const none = await explainEvaluation(
      [{ file: "gate.rego", source: gate }],
      {},
      { entrypoint: "gate/allow" },
    );
    expect(none.result).toEqual([{ result: false }]);
    expect(none.rules).toMatchObject([{ rule: "data.gate.allow", line: 3, default: true, because: [] }]);
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
