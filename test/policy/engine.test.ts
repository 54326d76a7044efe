/** The policy engine on its own: Rego compiled by Writ's compiler, evaluated, failing closed. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  loadPolicyBuiltins,
  PolicyEngine,
  PolicyFailure,
  PolicyLoadError,
  validateDecision,
} from "../../src/policy/index.ts";
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

/**
 * A denial guarded by a builtin the input can make fail: `regex.match` with the call's own
 * argument as the pattern. Without strict builtin errors a bad pattern makes the denial's body
 * undefined, so the call is allowed (issue 27).
 */
const GUARDED = `package writ

import rego.v1

default decision := {"decision": "allow", "reasons": [], "conditions": []}

decision := {"decision": "deny", "reasons": [{"code": "blocked", "message": "blocked", "visible_to_model": true}], "conditions": []} if {
	regex.match(input.action.args.pattern, "secret")
}
`;

/**
 * A policy that evaluates for hours for `notes.endless` (ten billion comparisons), and allows
 * anything else at once.
 */
const ENDLESS = `package writ

import rego.v1

r := numbers.range(1, 100000)

default decision := {"decision": "allow", "reasons": [], "conditions": []}

decision := {"decision": "deny", "reasons": [], "conditions": []} if {
	input.action.name == "notes.endless"
	every i in r {
		every j in r {
			i + j != input.never
		}
	}
}
`;

const withArgs = (args: Record<string, unknown>) => {
  const input = inputFor("search");
  return { ...input, action: { ...input.action, args } };
};

describe("strict builtin errors (issue 27)", () => {
  it("fail the evaluation, naming the builtin, where lax evaluation silently allowed", async () => {
    const lax = await engineWith(GUARDED);
    expect(lax.evaluate(withArgs({ pattern: "(" })).decision.decision).toBe("allow");
    const strict = await engineWith(GUARDED, { strictBuiltinErrors: true });
    let failure: unknown;
    try {
      strict.evaluate(withArgs({ pattern: "(" }));
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(PolicyFailure);
    expect(failure).toMatchObject({ code: "policy_builtin_error", builtin: "regex.match" });
    expect(String(failure)).toMatch(
      /the builtin regex\.match failed .*eval_builtin_error.*missing closing \)/,
    );
    // A pattern that compiles decides as before.
    expect(strict.evaluate(withArgs({ pattern: "sec" })).decision.decision).toBe("deny");
    expect(strict.evaluate(withArgs({ pattern: "public" })).decision.decision).toBe("allow");
  });

  it("evaluate the same on an evaluator thread", async () => {
    const strict = await engineWith(GUARDED, { strictBuiltinErrors: true, isolate: true });
    try {
      expect(failureOf(() => strict.evaluate(withArgs({ pattern: "(" })))).toBe("policy_builtin_error");
      expect(strict.evaluate(withArgs({ pattern: "sec" })).decision.decision).toBe("deny");
    } finally {
      strict.close();
    }
  });
});

describe("the evaluation budget, enforced while the policy runs (issues 27 and 32)", () => {
  it("stops a compiled policy at its budget on the calling thread, and decides the next at once", async () => {
    for (const isolate of [false, true]) {
      const engine = await engineWith(ENDLESS, { isolate, timeBudgetMs: 200 });
      try {
        // Unstopped, this evaluation would run for hours (and this test time out).
        expect(failureOf(() => engine.evaluate(inputFor("notes.endless")))).toBe("policy_too_slow");
        // No thread was ended, none has to be loaded: the next call is decided right away.
        expect(engine.evaluate(inputFor("notes.read")).decision.decision).toBe("allow");
        expect(failureOf(() => engine.evaluate(inputFor("notes.endless")))).toBe("policy_too_slow");
      } finally {
        engine.close();
      }
    }
  });

  it("stops a builtin's own loop too: one call building fifty million numbers", async () => {
    const engine = await engineWith(
      `package writ

import rego.v1

default decision := {"decision": "allow", "reasons": [], "conditions": []}

decision := {"decision": "deny", "reasons": [], "conditions": []} if {
	input.action.name == "notes.huge"
	count(numbers.range(1, 50000000)) == 0
}
`,
      { timeBudgetMs: 200 },
    );
    expect(failureOf(() => engine.evaluate(inputFor("notes.huge")))).toBe("policy_too_slow");
    expect(engine.evaluate(inputFor("notes.read")).decision.decision).toBe("allow");
  });

  it("stops a custom builtin that never returns by ending its evaluator thread", async () => {
    const module = path.join(dir, "spin.mjs");
    await writeFile(
      module,
      `export const builtins = [{
  name: "acme.spin",
  decl: { type: "function", args: [{ type: "string" }], result: { type: "boolean" } },
  impl: () => { for (;;) {} },
}];
`,
    );
    const builtins = await loadPolicyBuiltins([module]);
    const engine = await engineWith(
      `package writ

import rego.v1

default decision := {"decision": "allow", "reasons": [], "conditions": []}

decision := {"decision": "deny", "reasons": [], "conditions": []} if {
	input.action.name == "notes.spin"
	acme.spin("forever")
}
`,
      { builtins, isolate: true, timeBudgetMs: 200 },
    );
    try {
      // The metered module cannot stop JavaScript: this one runs on a thread, which is ended.
      expect(failureOf(() => engine.evaluate(inputFor("notes.spin")))).toBe("policy_too_slow");
      // The next waits for the spare thread (within its budget), or fails closed while it loads:
      // unavailable, or too slow when a loaded machine takes longer than the budget to start it.
      const loading = new Set(["policy_unavailable", "policy_too_slow"]);
      let next: string | undefined = "policy_unavailable";
      for (let i = 0; i < 50 && next !== undefined && loading.has(next); i++) {
        next = failureOf(() => engine.evaluate(inputFor("notes.read")));
        if (next !== undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(next).toBeUndefined();
    } finally {
      engine.close();
    }
  });

  it("answers what the thread answers, large inputs and answers included", async () => {
    const echo = `package writ

import rego.v1

decision := {"decision": "allow", "reasons": [{"code": "echo", "message": input.action.args.text, "visible_to_model": false}], "conditions": []}
`;
    const inline = await engineWith(echo);
    const engine = await engineWith(echo, { isolate: true });
    try {
      for (const text of ["short", "é€😀".repeat(10_000), "x".repeat(100_000)]) {
        // The answer crosses whole (its message is bounded after it crossed).
        expect(engine.evaluate(withArgs({ text })).decision).toEqual(
          inline.evaluate(withArgs({ text })).decision,
        );
      }
    } finally {
      engine.close();
    }
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
