import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import { fromJSON, toJSON } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const ctx = systemContext(() => 1_700_000_000_000_000_000n);

function call(name: string, ...args: unknown[]): unknown {
  const result = callBuiltin(name, args.map(fromJSON), ctx);
  return result === undefined ? undefined : toJSON(result);
}

function errorOf(name: string, ...args: unknown[]): string | undefined {
  const def = builtinTable.get(name);
  if (!def) throw new Error(`no builtin ${name}`);
  try {
    def.impl(args.map(fromJSON), ctx);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

describe("glob.match", () => {
  it("matches * within separators and ** across them", () => {
    expect(call("glob.match", "*.github.com", ["."], "api.github.com")).toBe(true);
    expect(call("glob.match", "*.github.com", ["."], "api.cdn.github.com")).toBe(false);
    expect(call("glob.match", "api.**.com", ["."], "api.cdn.github.com")).toBe(true);
    expect(call("glob.match", "*.github.com", [], "api.cdn.github.com")).toBe(false);
    expect(call("glob.match", "*", null, "a.b/c")).toBe(true);
    expect(call("glob.match", "*:github:com", [":"], "api:github:com")).toBe(true);
  });

  it("supports ?, classes, negated classes, alternatives and escapes", () => {
    expect(call("glob.match", "?at", null, "cat")).toBe(true);
    expect(call("glob.match", "?at", ["c"], "cat")).toBe(false);
    expect(call("glob.match", "[a-c]at", null, "bat")).toBe(true);
    expect(call("glob.match", "[!a-c]at", null, "bat")).toBe(false);
    expect(call("glob.match", "{cat,dog}s", null, "dogs")).toBe(true);
    expect(call("glob.match", "{cat,{d,f}og}", null, "fog")).toBe(true);
    expect(call("glob.match", "\\*.txt", null, "*.txt")).toBe(true);
    expect(call("glob.match", "\\*.txt", null, "a.txt")).toBe(false);
    expect(call("glob.match", "(a|b)+", null, "(a|b)+")).toBe(true);
    expect(call("glob.match", "😀?", null, "😀é")).toBe(true);
  });

  it("rejects invalid globs and bad separators", () => {
    expect(errorOf("glob.match", "[abc", null, "a")).toBe('glob.match: invalid glob pattern "[abc"');
    expect(errorOf("glob.match", "{a,b", null, "a")).toBe('glob.match: invalid glob pattern "{a,b"');
    expect(errorOf("glob.match", "a", ["ab"], "a")).toBe(
      "glob.match: operand 2 must be array of runes but got array containing string",
    );
    expect(errorOf("glob.match", "a", "x", "a")).toBe(
      "glob.match: operand 2 must be one of {array, null} but got string",
    );
  });

  it("matches (backtracking would not end within the test's timeout)", () => {
    const s = `${"a".repeat(100_000)}b`;
    expect(call("glob.match", "*a*a*a*a*a*a*c", null, s)).toBe(false);
  });
});

describe("glob.quote_meta", () => {
  it("escapes the glob metacharacters only", () => {
    expect(call("glob.quote_meta", "*.github.com")).toBe("\\*.github.com");
    expect(call("glob.quote_meta", "[a]{b,c}?\\!-")).toBe("\\[a\\]\\{b,c\\}\\?\\\\!-");
  });

  it("quotes so that glob.match matches the text literally", () => {
    const text = "a*b?[c]{d}";
    const quoted = call("glob.quote_meta", text);
    expect(call("glob.match", quoted, null, text)).toBe(true);
    expect(call("glob.match", quoted, null, "aXb?[c]{d}")).toBe(false);
  });
});

describe("in a compiled policy", () => {
  it("runs the glob builtins through the SDK", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := [glob.match("*.example.com", ["."], input.host), glob.quote_meta("a*")]`,
        },
      ],
      { entrypoints: ["p/r"] },
    );
    expect(built.errors).toEqual([]);
    if (!built.wasm) throw new Error("no module");
    const policy = await loadCompiledPolicy({ wasm: built.wasm });
    expect(policy.evaluate({ host: "api.example.com" }, "p/r")).toEqual([{ result: [true, "a\\*"] }]);
    expect(policy.evaluate({ host: "a.b.example.com" }, "p/r")).toEqual([{ result: [false, "a\\*"] }]);
  });
});
