import { describe, expect, it } from "vitest";
import { parseProposal } from "../../src/intake/index.ts";
import { findDuplicateKey } from "../../src/intake/lib/arguments.ts";
import { errorOf } from "./helpers.ts";

function openaiCall(argumentsText: string) {
  return { id: "call_1", type: "function", function: { name: "f", arguments: argumentsText } };
}

describe("arguments", () => {
  it("finds repeated keys at any depth, also when spelt with escapes", () => {
    expect(findDuplicateKey('{"a": 1, "b": {"c": [1, {"d": 1, "d": 2}]}}')).toBe('"d" at /b/c/1/d');
    expect(findDuplicateKey('{"a": 1, "\\u0061": 2}')).toBe('"a" at /a');
    expect(findDuplicateKey('{"a/b": {"x~": 1, "x~": 2}}')).toBe('"x~" at /a~1b/x~0');
    expect(findDuplicateKey('{"a": "{\\"a\\": 1}", "b": [{"a": 1}, {"a": 2}]}')).toBeUndefined();
  });

  it("refuses numbers JSON.parse turns into infinity", () => {
    expect(errorOf(() => parseProposal("openai-chat", openaiCall('{"amount": 1e400}'))).field_errors).toEqual(
      [
        {
          path: "/function/arguments",
          message: "number out of range at /amount: JSON numbers must be finite doubles",
        },
      ],
    );
  });

  it("refuses __proto__ keys, which some JavaScript backends would turn into a prototype", () => {
    const payload = { tool: "t", arguments: JSON.parse('{"options": {"__proto__": {"admin": true}}}') };
    expect(errorOf(() => parseProposal("canonical", payload)).field_errors).toEqual([
      { path: "/arguments", message: 'the key "__proto__" at /options is not accepted in arguments' },
    ]);
  });

  it("refuses arguments nested deeper than 64 levels", () => {
    const deep = `${'{"a":'.repeat(70)}1${"}".repeat(70)}`;
    expect(errorOf(() => parseProposal("openai-chat", openaiCall(deep))).field_errors[0]?.message).toMatch(
      /^arguments nest deeper than 64 levels at \/a\/a/,
    );
  });
});
