/**
 * Stage 2 with declared paths: every path in a call's arguments (nested in objects and arrays)
 * is normalized before the schema check and the digest, and a refused one is an
 * `invalid_argument` naming it and the root to stay in.
 */
import { describe, expect, it } from "vitest";
import { CompiledContractRegistry, type ToolContractInput } from "../../src/contracts/index.ts";
import { jsonDigest } from "../../src/core/digest.ts";
import { WritError } from "../../src/core/errors.ts";
import type { ProposedCall } from "../../src/core/types.ts";
import { normalize } from "../../src/normalize/index.ts";

const docPath = { type: "string", format: "path", "x-writ-root": "/srv/docs" };

const docsCopy: ToolContractInput = {
  name: "docs.copy",
  version: "1",
  description: "Copy documents",
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["from"],
    properties: {
      from: { type: "array", items: docPath },
      to: { type: "object", properties: { dir: { ...docPath, "x-writ-relative": true } } },
      pair: { type: "array", prefixItems: [{ type: "string" }, docPath] },
      tags: {
        type: "object",
        patternProperties: { "^x-": { type: "string" } },
        additionalProperties: docPath,
      },
      note: { type: "string" },
      md: { ...docPath, pattern: "\\.md$" },
    },
  },
  side_effect: "reversible",
  idempotency: "natural",
  backend: { kind: "inprocess", handler: "docs.copy" },
};

const registry = CompiledContractRegistry.fromConfig([docsCopy]);

function call(args: Record<string, unknown>): ProposedCall {
  return { callId: "c1", tool: "docs.copy", arguments: args, source: "canonical", pointer: "/calls/0" };
}

function refusal(args: Record<string, unknown>): WritError {
  try {
    normalize(call(args), registry);
  } catch (error) {
    if (error instanceof WritError) return error;
    throw error;
  }
  throw new Error("normalize accepted the call");
}

describe("normalize with declared paths", () => {
  it("normalizes every declared path, nested, and digests the normalized arguments", () => {
    const given = {
      from: ["a/./b.md", "/srv/docs//c/../d.md/"],
      to: { dir: "/srv/docs/out/" },
      pair: ["./keep", "x/y"],
      tags: { other: "./t", "x-raw": "./raw" },
      note: "../not/a/path",
    };
    const { action } = normalize(call(given), registry);
    const expected = {
      from: ["/srv/docs/a/b.md", "/srv/docs/d.md"],
      to: { dir: "out" },
      pair: ["./keep", "/srv/docs/x/y"],
      tags: { other: "/srv/docs/t", "x-raw": "./raw" },
      note: "../not/a/path",
    };
    expect(action.args).toEqual(expected);
    expect(action.args_digest).toBe(jsonDigest(expected));
    expect(given.from[0]).toBe("a/./b.md");
  });

  it("refuses paths that leave the root, each at its pointer, with the root in the fix", () => {
    const error = refusal({ from: ["ok.md", "/srv/docs/../secret"], to: { dir: "../../etc" } });
    expect(error.category).toBe("invalid_argument");
    expect(error.fieldErrors).toEqual([
      { path: "/arguments/from/1", message: "resolves to /srv/secret, outside /srv/docs" },
      { path: "/arguments/to/dir", message: "resolves to /etc, outside /srv/docs" },
    ]);
    expect(error.suggestedFix).toContain("send a path inside /srv/docs");
    expect(error.suggestedFix).toContain("at /arguments/from/1");
  });

  it("refuses double encoding and backslashes with what to do", () => {
    const encoded = refusal({ from: ["%252e%252e/secret"] });
    expect(encoded.fieldErrors[0]?.path).toBe("/arguments/from/0");
    expect(encoded.suggestedFix).toContain("percent-encoded at most once");
    const backslash = refusal({ from: ["..\\secret"] });
    expect(backslash.suggestedFix).toContain("separated by /");
  });

  it("checks the schema against the normalized path", () => {
    expect(normalize(call({ from: [], md: "notes/./a.md/" }), registry).action.args.md).toBe(
      "/srv/docs/notes/a.md",
    );
    const error = refusal({ from: [], md: "/srv/docs/a.txt" });
    expect(error.fieldErrors[0]?.path).toBe("/arguments/md");
  });

  it("leaves a value of the wrong type to the schema check", () => {
    const error = refusal({ from: [7] });
    expect(error.fieldErrors).toEqual([
      { path: "/arguments/from/0", message: "must be string, got integer" },
    ]);
  });

  it("keeps a property named __proto__ an own property", () => {
    const args = JSON.parse('{"from": [], "tags": {"__proto__": "./p"}}');
    const { action } = normalize(call(args), registry);
    const tags = action.args.tags;
    expect(tags !== null && typeof tags === "object" && Object.getPrototypeOf(tags)).toBe(Object.prototype);
    expect(JSON.stringify(tags)).toBe('{"__proto__":"/srv/docs/p"}');
  });
});
