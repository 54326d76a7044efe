import { describe, expect, it } from "vitest";
import { findKeyProblems, parseProposal } from "../../src/intake/index.ts";
import { errorOf } from "./helpers.ts";

function openaiCall(argumentsText: string) {
  return { id: "call_1", type: "function", function: { name: "f", arguments: argumentsText } };
}

describe("arguments", () => {
  it("finds repeated keys at any depth, also when spelt with escapes, and __proto__ keys", () => {
    const duplicates = (text: string) =>
      findKeyProblems(text).map((problem) => `${problem.kind} ${problem.pointer}`);
    expect(duplicates('{"a": 1, "b": {"c": [1, {"d": 1, "d": 2}]}}')).toEqual(["duplicate /b/c/1/d"]);
    expect(duplicates('{"a": 1, "\\u0061": 2}')).toEqual(["duplicate /a"]);
    expect(duplicates('{"a/b": {"x~": 1, "x~": 2}}')).toEqual(["duplicate /a~1b/x~0"]);
    expect(duplicates('{"a": "{\\"a\\": 1}", "b": [{"a": 1}, {"a": 2}]}')).toEqual([]);
    expect(duplicates('[{"x": {"__proto__": {}}}, {"constructor": 1, "prototype": 2}]')).toEqual([
      "proto /0/x/__proto__",
    ]);
  });

  it("refuses argument text that repeats a key or names __proto__, saying where", () => {
    const problems = (text: string) =>
      errorOf(() => parseProposal("openai-chat", openaiCall(text))).field_errors;
    expect(problems('{"path": "/tmp", "path": "/etc"}')).toEqual([
      {
        path: "/function/arguments",
        message:
          'arguments: at /path, the key "path" appears twice in one object; each key may appear once per object',
      },
    ]);
    expect(problems('{"a": [{"__proto__": {"admin": true}}]}')[0]?.message).toMatch(
      /^arguments: at \/a\/0\/__proto__, the key "__proto__" is not accepted/,
    );
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
