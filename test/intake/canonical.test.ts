import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { errorOf } from "./helpers.ts";

describe("canonical", () => {
  it("reads a batch in order and numbers calls without an id by position", () => {
    const payload = {
      calls: [
        { id: "a", tool: "repo.read", arguments: { repo: "writ", path: "README.md" } },
        { tool: "repo.write", arguments: { repo: "writ", path: "x", content: "" } },
      ],
    };
    expect(parseProposal("canonical", payload)).toEqual({
      format: "canonical",
      calls: [
        {
          callId: "a",
          tool: "repo.read",
          arguments: { repo: "writ", path: "README.md" },
          source: "canonical",
          pointer: "/calls/0",
        },
        {
          callId: "call-1",
          tool: "repo.write",
          arguments: { repo: "writ", path: "x", content: "" },
          source: "canonical",
          pointer: "/calls/1",
        },
      ],
    });
  });

  it("reads a single call", () => {
    expect(parseProposal("canonical", { tool: "repo.read", arguments: {} }).calls).toEqual([
      { callId: "call-0", tool: "repo.read", arguments: {}, source: "canonical", pointer: "" },
    ]);
  });

  it("refuses unknown fields, missing arguments, an empty batch and repeated ids", () => {
    expect(
      errorOf(() => parseProposal("canonical", { tool: "t", arguments: {}, args: {} })).field_errors,
    ).toEqual([{ path: "/args", message: 'unknown field "args"' }]);
    expect(errorOf(() => parseProposal("canonical", { calls: [{ tool: "t" }] })).field_errors).toEqual([
      { path: "/calls/0/arguments", message: "required field is missing" },
    ]);
    expect(errorOf(() => parseProposal("canonical", { calls: [] })).message).toBe(
      "the payload proposes no tool call",
    );
    const repeated = {
      calls: [
        { tool: "t", arguments: {} },
        { id: "call-0", tool: "t", arguments: {} },
      ],
    };
    expect(errorOf(() => parseProposal("canonical", repeated)).field_errors).toEqual([
      { path: "/calls/1", message: 'call id "call-0" is already used by the call at /calls/0' },
    ]);
  });
});
