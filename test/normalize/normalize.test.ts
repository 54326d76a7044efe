import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CompiledContractRegistry, type ToolContractInput } from "../../src/contracts/index.ts";
import { jsonDigest } from "../../src/core/digest.ts";
import type { ProposedCall } from "../../src/core/types.ts";
import { normalize, normalizedArgsDigest, UnknownToolError } from "../../src/normalize/index.ts";
import { repoRead, repoWrite, ticketsSearch } from "../contracts/fixtures.ts";
import { errorOf } from "../intake/helpers.ts";

const registry = CompiledContractRegistry.fromConfig([repoRead(), repoWrite(), ticketsSearch()]);

function proposed(
  tool: string,
  args: Record<string, unknown>,
  source: ProposedCall["source"] = "openai",
): ProposedCall {
  return { callId: "call_1", tool, arguments: args, source, pointer: "/choices/0/message/tool_calls/0" };
}

describe("normalize", () => {
  it("maps a call to its contract's canonical action and resource", () => {
    const result = normalize(proposed("read_file", { repo: "writ", path: "README.md" }), registry);
    expect(result.contract.name).toBe("repo.read");
    expect(result.action).toEqual({
      name: "repo.read",
      version: "1",
      side_effect: "none",
      idempotency: "natural",
      data_classification: "internal",
      args: { repo: "writ", path: "README.md" },
      args_digest: createHash("sha256").update('{"path":"README.md","repo":"writ"}').digest("hex"),
    });
    expect(result.resource).toEqual({ type: "repo", id: "writ" });
    expect(result.resourceRevision).toBeUndefined();
  });

  it("remembers the digest of the arguments it made, for them only", () => {
    const given = { repo: "writ", path: "README.md" };
    const { action } = normalize(proposed("read_file", given), registry);
    expect(normalizedArgsDigest(action.args)).toBe(action.args_digest);
    expect(action.args_digest).toBe(jsonDigest(action.args));
    // The caller's object, or a copy with the same content, is digested by whoever needs it.
    expect(normalizedArgsDigest(given)).toBeUndefined();
    expect(normalizedArgsDigest({ ...action.args })).toBeUndefined();
  });

  it("reads the expected revision when the contract names one", () => {
    const args = { repo: "writ", path: "src/a.ts", content: "x", expected_revision: "r41" };
    const result = normalize(proposed("repo_write", args, "anthropic"), registry);
    expect(result.action).toMatchObject({
      side_effect: "committing",
      idempotency: "keyed",
      data_classification: "confidential",
    });
    expect(result.resource).toEqual({ type: "file", id: "src/a.ts" });
    expect(result.resourceRevision).toBe("r41");
    expect(
      normalize(proposed("repo.write", { repo: "writ", path: "a", content: "" }, "canonical"), registry)
        .resourceRevision,
    ).toBeUndefined();
  });

  it("gives the same digest whatever the key order, and another for other values", () => {
    const one = normalize(proposed("search_tickets", { query: "refund", limit: 5 }), registry).action
      .args_digest;
    const two = normalize(proposed("search_tickets", { limit: 5, query: "refund" }), registry).action
      .args_digest;
    const other = normalize(proposed("search_tickets", { limit: 6, query: "refund" }), registry).action
      .args_digest;
    expect(one).toBe(two);
    expect(one).not.toBe(other);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
  });

  it("keeps its own copy of the arguments", () => {
    const args = { query: "refund", filters: { open: true } };
    const result = normalize(proposed("search_tickets", args), registry);
    args.filters.open = false;
    expect(result.action.args).toEqual({ query: "refund", filters: { open: true } });
  });

  it("answers unknown_tool with the tool's name, suggesting names only once told which the caller sees", () => {
    const error = errorOf(() => normalize(proposed("read_files", { repo: "writ" }), registry));
    expect(error).toEqual({
      status: "failed",
      category: "unknown_tool",
      retryable: false,
      message: 'unknown tool "read_files" (call call_1)',
      field_errors: [{ path: "/tool", message: 'no tool is named "read_files"' }],
      suggested_fix: "Call one of the tools you may use: GET /v1/tools (or tools/list over MCP) lists them.",
      effect_committed: false,
    });
    const thrown = (() => {
      try {
        normalize(proposed("repo.wrte", {}, "canonical"), registry);
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toBeInstanceOf(UnknownToolError);
    if (!(thrown instanceof UnknownToolError)) throw new Error("unreachable");
    expect(thrown.suggesting(["repo.read", "tickets.search", "repo.write"]).suggestedFix).toBe(
      "Call one of the tools you may use, closest first: repo.write, repo.read, tickets.search.",
    );
    expect(thrown.suggesting([]).suggestedFix).toMatch(/No tool is available to you/);
  });

  it("asks for a version when a canonical name has several, and for contracts when there are none", () => {
    const two = CompiledContractRegistry.fromConfig([
      repoRead(),
      { ...repoRead(), version: "2", model_views: [{ family: "default", name: "repo_read_v2" }] },
    ]);
    const error = errorOf(() => normalize(proposed("repo.read", {}, "canonical"), two));
    expect(error.category).toBe("unknown_tool");
    expect(error.message).toBe(
      'tool "repo.read" (call call_1) has several versions (1, 2) and the call names none',
    );
    expect(error.suggested_fix).toMatch(/repo\.read@2/);
    const empty = errorOf(() => normalize(proposed("anything", {}), new CompiledContractRegistry([])));
    expect(empty.suggested_fix).toMatch(/declare tool contracts/);
  });

  it("answers invalid_argument with one field error per schema error, under /arguments", () => {
    const error = errorOf(() =>
      normalize(proposed("read_file", { path: 3, ref: "main", raw: true }), registry),
    );
    expect(error.category).toBe("invalid_argument");
    expect(error.field_errors).toEqual([
      { path: "/arguments/repo", message: "is required" },
      { path: "/arguments/raw", message: "is not a field the schema allows; remove it" },
      { path: "/arguments/path", message: "must be string, got integer" },
    ]);
    expect(error.message).toBe(
      "the arguments of read_file (call call_1) do not match its input schema: /arguments/repo is required (and 2 more)",
    );
    expect(error.suggested_fix).toBe(
      "Fix the listed arguments and call read_file again with arguments matching its input schema (required: repo, path; fields: repo, path, ref).",
    );
    const range = errorOf(() => normalize(proposed("search_tickets", { query: "x", limit: 500 }), registry));
    expect(range.field_errors).toEqual([{ path: "/arguments/limit", message: "must be <= 50" }]);
  });

  it("does not coerce types", () => {
    const error = errorOf(() => normalize(proposed("search_tickets", { query: "x", limit: "5" }), registry));
    expect(error.field_errors).toEqual([
      { path: "/arguments/limit", message: "must be integer, got string" },
    ]);
  });
});

describe("resource extraction", () => {
  function kvPut(resource: { type: string; id: string; revision?: string }): ToolContractInput {
    return {
      name: "kv.put",
      version: "1",
      description: "Store a value.",
      input_schema: { type: "object" },
      side_effect: "reversible",
      idempotency: "keyed",
      resource,
      backend: { kind: "inprocess", handler: "kv.put" },
    };
  }

  it("follows escaped pointers (~1 for /, ~0 for ~)", () => {
    const kv = CompiledContractRegistry.fromConfig([
      kvPut({ type: "ref", id: "/refs/heads~1main/name~0x", revision: "/rev/0" }),
    ]);
    const args = { refs: { "heads/main": { "name~x": "release" } }, rev: [7] };
    const result = normalize(proposed("kv_put", args), kv);
    expect(result.resource).toEqual({ type: "ref", id: "release" });
    expect(result.resourceRevision).toBe("7");
  });

  it("names the pointer when the id is missing or not a string or number", () => {
    const kv = CompiledContractRegistry.fromConfig([kvPut({ type: "key", id: "/key/a~1b" })]);
    const missing = errorOf(() => normalize(proposed("kv_put", { key: { a: "x" } }), kv));
    expect(missing).toMatchObject({
      category: "invalid_argument",
      message:
        "the arguments of kv_put (call call_1) do not name the key resource: nothing at /arguments/key/a~1b",
      field_errors: [{ path: "/arguments/key/a~1b", message: "is required: it names the key resource" }],
    });
    const object = errorOf(() => normalize(proposed("kv_put", { key: { "a/b": { id: 1 } } }), kv));
    expect(object.field_errors).toEqual([
      {
        path: "/arguments/key/a~1b",
        message: "must be a non-empty string or a number naming the key resource, got an object",
      },
    ]);
    const empty = errorOf(() => normalize(proposed("kv_put", { key: { "a/b": "" } }), kv));
    expect(empty.field_errors[0]?.path).toBe("/arguments/key/a~1b");
    expect(normalize(proposed("kv_put", { key: { "a/b": 42 } }), kv).resource).toEqual({
      type: "key",
      id: "42",
    });
  });
});
