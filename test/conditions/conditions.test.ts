import { describe, expect, it } from "vitest";
import { enforceConditions, finalArguments } from "../../src/conditions/index.ts";
import { WritError } from "../../src/core/errors.ts";

function refusal(run: () => void): WritError {
  try {
    run();
  } catch (error) {
    if (error instanceof WritError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("conditions", () => {
  it("args_override merges forced values without changing the input", () => {
    const args = { amount: 5, dry_run: false };
    expect(finalArguments(args, [{ type: "args_override", args: { dry_run: true } }])).toEqual({
      amount: 5,
      dry_run: true,
    });
    expect(args.dry_run).toBe(false);
  });

  it("max_value allows up to the max and refuses above it", () => {
    const c = [{ type: "max_value" as const, path: "/amount", max: 100 }];
    expect(() => enforceConditions(c, { amount: 100 }, undefined)).not.toThrow();
    expect(refusal(() => enforceConditions(c, { amount: 101 }, undefined))).toMatchObject({
      category: "policy_denied",
      effectCommitted: false,
    });
  });

  it("require_revision is a compare-and-swap on the current revision", () => {
    const c = [{ type: "require_revision" as const, revision: "3" }];
    expect(() => enforceConditions(c, {}, 3)).not.toThrow();
    expect(refusal(() => enforceConditions(c, {}, 4)).category).toBe("stale_revision");
  });
});
