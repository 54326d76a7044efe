/** The policy engine on its own: Rego compiled by Writ's compiler, evaluated, failing closed. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PolicyEngine, PolicyFailure, PolicyLoadError, validateDecision } from "../../src/policy/index.ts";
import { POLICY } from "../pipeline/harness.ts";
import { policyInputFor } from "./inputs.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-policy-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function engineWith(source: string, options: ConstructorParameters<typeof PolicyEngine>[0] = {}) {
  await writeFile(path.join(dir, "decision.rego"), source);
  const engine = new PolicyEngine(options);
  await engine.loadDirectory(dir);
  return engine;
}

const inputFor = (action: string) => policyInputFor(action);

/** The PolicyFailure code `run` throws, or undefined when it does not throw one. */
function failureOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof PolicyFailure) return error.code;
    throw error;
  }
  return undefined;
}

describe("PolicyEngine", () => {
  it("evaluates the decision entrypoint of a compiled folder, with a stable revision", async () => {
    const engine = await engineWith(POLICY);
    const evaluated = engine.evaluate(inputFor("notes.read"));
    expect(evaluated.decision).toEqual({ decision: "allow", reasons: [], conditions: [] });
    expect(evaluated.revision).toBe(engine.revision);
    const again = new PolicyEngine();
    expect(await again.loadDirectory(dir)).toBe(engine.revision);
  });

  it("validates conditions into Writ's vocabulary", async () => {
    const engine = await engineWith(POLICY);
    expect(engine.evaluate(inputFor("notes.pay")).decision.conditions).toEqual([
      { type: "max_value", path: "/amount", max: 10 },
    ]);
  });

  it("fails closed: malformed, undefined, or no policy at all", async () => {
    expect(failureOf(() => new PolicyEngine().evaluate(inputFor("notes.read")))).toBe("policy_unavailable");
    const engine = await engineWith(POLICY);
    expect(failureOf(() => engine.evaluate(inputFor("notes.broken")))).toBe("policy_malformed");
    const partial = await engineWith(
      'package writ\n\nimport rego.v1\n\ndecision := {"decision": "allow", "reasons": []} if input.action.name == "x"\n',
    );
    expect(failureOf(() => partial.evaluate(inputFor("y")))).toBe("policy_undefined");
  });

  it("a policy over its time budget is a failure", async () => {
    const engine = await engineWith(POLICY, { timeBudgetMs: 0 });
    expect(failureOf(() => engine.evaluate(inputFor("notes.read")))).toBe("policy_too_slow");
  });

  it("a folder that does not compile is a load error, and keeps the policy that works", async () => {
    const engine = await engineWith(POLICY);
    const before = engine.revision;
    await writeFile(path.join(dir, "decision.rego"), "package writ\n\ndecision := \n");
    await expect(engine.loadDirectory(dir)).rejects.toBeInstanceOf(PolicyLoadError);
    expect(engine.revision).toBe(before);
    expect(engine.evaluate(inputFor("notes.read")).decision.decision).toBe("allow");
  });
});

describe("validateDecision", () => {
  const code = (value: unknown) => failureOf(() => validateDecision(value, "writ/decision"));

  it("accepts a well-formed decision", () => {
    expect(validateDecision({ decision: "deny", reasons: [] }, "writ/decision")).toMatchObject({
      decision: "deny",
    });
  });

  it("refuses decisions Writ could not enforce", () => {
    expect(code({ decision: "allow", reasons: [], conditions: [{ type: "max_uses", uses: 1 }] })).toBe(
      "policy_malformed",
    );
    expect(code({ decision: "allow_with_conditions", reasons: [], conditions: [] })).toBe("policy_malformed");
    expect(code({ decision: "require_approval", reasons: [] })).toBe("policy_malformed");
    expect(code({ decision: "allow_with_conditions", reasons: [], conditions: [{ type: "teleport" }] })).toBe(
      "policy_malformed",
    );
  });
});
