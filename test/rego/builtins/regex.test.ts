import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { LruCache } from "../../../src/rego/builtins/impl/regex.ts";
import { builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import { fromJSON, toJSON } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const ctx = systemContext(() => 1_700_000_000_000_000_000n);

/** Calls a builtin with JSON arguments; its JSON result, or undefined. */
function call(name: string, ...args: unknown[]): unknown {
  const result = callBuiltin(name, args.map(fromJSON), ctx);
  return result === undefined ? undefined : toJSON(result);
}

/** The error a builtin raises (code and message), or undefined. */
function error(name: string, ...args: unknown[]): { code: string; message: string } | undefined {
  const def = builtinTable.get(name);
  if (!def) throw new Error(`no builtin ${name}`);
  try {
    def.impl(args.map(fromJSON), ctx);
    return undefined;
  } catch (e) {
    if (e instanceof Error && "code" in e && typeof e.code === "string")
      return { code: e.code, message: e.message };
    throw e;
  }
}

describe("regex.match and re_match", () => {
  it("matches with RE2 syntax", () => {
    expect(call("regex.match", "^[a-z]+\\d$", "abc1")).toBe(true);
    expect(call("regex.match", "(?i)^ABC$", "abc")).toBe(true);
    expect(call("regex.match", "^\\pL+$", "héllo")).toBe(true);
    expect(call("regex.match", "^[[:alpha:]]+$", "abc")).toBe(true);
    expect(call("regex.match", "(?P<word>\\w+)", "x")).toBe(true);
    expect(call("regex.match", "\\Qa.b\\E", "axb")).toBe(false);
    expect(call("regex.match", "^a\\z", "a\n")).toBe(false);
    expect(call("re_match", "^b", "bar")).toBe(true);
  });

  it("rejects what Go's regexp rejects, with Go's message", () => {
    expect(error("regex.match", "[", "x")).toEqual({
      code: "eval_builtin_error",
      message: "regex.match: error parsing regexp: missing closing ]: `[`",
    });
    // Perl syntax RE2 does not support (JavaScript would accept these).
    expect(call("regex.match", "(?=a)", "a")).toBeUndefined();
    expect(call("regex.match", "(a)\\1", "aa")).toBeUndefined();
    expect(error("regex.match", 1, "x")?.code).toBe("eval_type_error");
  });

  it("matches a pathological pattern (backtracking would not end within the test's timeout)", () => {
    const s = `${"a".repeat(100_000)}!`;
    expect(call("regex.match", "(a+)+$", s)).toBe(false);
    expect(call("regex.match", "^(a|aa)+$", s)).toBe(false);
    expect(call("regex.find_n", "(a*)*b", s, -1)).toEqual([]);
  });
});

describe("regex.is_valid", () => {
  it("is true for RE2 patterns and false otherwise, never an error", () => {
    expect(call("regex.is_valid", "a+b")).toBe(true);
    expect(call("regex.is_valid", "(?<=a)b")).toBe(false);
    expect(call("regex.is_valid", "a**")).toBe(false);
    expect(call("regex.is_valid", 1)).toBe(false);
  });
});

describe("regex.split", () => {
  it("splits like Go's Regexp.Split(s, -1)", () => {
    expect(call("regex.split", "a", "banana")).toEqual(["b", "n", "n", ""]);
    expect(call("regex.split", "", "héllo")).toEqual(["h", "é", "l", "l", "o"]);
    expect(call("regex.split", "x*", "axxb")).toEqual(["a", "b"]);
    expect(call("regex.split", ",", "")).toEqual([""]);
  });
});

describe("regex.find_n", () => {
  it("returns up to n matches, all when n is negative", () => {
    expect(call("regex.find_n", "a.", "paranormal", -1)).toEqual(["ar", "an", "al"]);
    expect(call("regex.find_n", "a.", "paranormal", 2)).toEqual(["ar", "an"]);
    expect(call("regex.find_n", "a.", "paranormal", 0)).toEqual([]);
    expect(call("regex.find_n", "a*", "baaa😀c", -1)).toEqual(["", "aaa", "", ""]);
  });
});

describe("regex.find_all_string_submatch_n", () => {
  it("returns each match with its groups, unmatched groups as empty strings", () => {
    expect(call("regex.find_all_string_submatch_n", "a(x*)b", "-ab-axxb-", -1)).toEqual([
      ["ab", ""],
      ["axxb", "xx"],
    ]);
    expect(call("regex.find_all_string_submatch_n", "(a)|(b)", "ab", 1)).toEqual([["a", "a", ""]]);
    expect(call("regex.find_all_string_submatch_n", "z", "ab", -1)).toEqual([]);
  });
});

describe("regex.replace", () => {
  it("replaces every match, expanding $1, braced and named group references as Go does", () => {
    expect(call("regex.replace", "-ab-axxb-", "a(x*)b", "$\u007b1}W")).toBe("-W-xxW-");
    expect(call("regex.replace", "-ab-axxb-", "a(x*)b", "$1W")).toBe("---");
    expect(call("regex.replace", "-ab-axxb-", "a(?P<x>x*)b", "[$\u007bx}]")).toBe("-[]-[xx]-");
    expect(call("regex.replace", "ab", "(a)", "$$1")).toBe("$1b");
    expect(call("regex.replace", "ab", "(a)", "$")).toBe("$b");
    expect(call("regex.replace", "ab", "(a)", "${1")).toBe("${1b");
  });

  it("anchors at the start of the string only, and handles empty matches as Go does", () => {
    expect(call("regex.replace", "aaa", "^a", "b")).toBe("baa");
    expect(call("regex.replace", "abc", "x*", "-")).toBe("-a-b-c-");
    expect(call("regex.replace", "baaac", "a*", "-")).toBe("-b-c-");
    expect(call("regex.replace", "😀😀", "", "|")).toBe("|😀|😀|");
  });

  it("fails on an invalid pattern", () => {
    expect(error("regex.replace", "foo", "[", "x")?.message).toBe(
      "regex.replace: error parsing regexp: missing closing ]: `[`",
    );
  });
});

describe("regex.template_match", () => {
  it("matches the template's literal text and its delimited patterns", () => {
    expect(call("regex.template_match", "urn:foo:{.*}", "urn:foo:bar:baz", "{", "}")).toBe(true);
    expect(call("regex.template_match", "urn:foo.bar:<[0-9]{2}>", "urn:foo.bar:12", "<", ">")).toBe(true);
    expect(call("regex.template_match", "urn:foo.bar:<[0-9]{2}>", "urn:fooxbar:12", "<", ">")).toBe(false);
    expect(call("regex.template_match", "urn:<[a-z]+>:<[0-9]+>", "urn:abc:123", "<", ">")).toBe(true);
  });

  it("reports unbalanced delimiters and bad delimiter lengths as OPA does", () => {
    expect(error("regex.template_match", "urn:{.*", "urn:x", "{", "}")?.message).toBe(
      'regex.template_match: unbalanced braces in "urn:{.*"',
    );
    expect(error("regex.template_match", "x", "x", "{{", "}")?.message).toBe(
      "regex.template_match: start delimiter has to be exactly one character long but is 2 long",
    );
    expect(error("regex.template_match", "x", "x", "{", "é")?.message).toBe(
      "regex.template_match: end delimiter has to be exactly one character long but is 1 long",
    );
    expect(error("regex.template_match", "{(}", "x", "{", "}")?.message).toContain("missing closing )");
  });
});

describe("regex.globs_match", () => {
  it("decides whether two globs share a string", () => {
    expect(call("regex.globs_match", "a.a.[0-9]+z", ".b.b2359825792*594823z")).toBe(true);
    expect(call("regex.globs_match", "[a-z]+", "[0-9]*")).toBe(false);
    expect(call("regex.globs_match", "b.*", "bar")).toBe(true);
    expect(call("regex.globs_match", "b.*", "car")).toBe(false);
    expect(call("regex.globs_match", "[a-z]+\\[[0-9]+\\]", "foo\\[1\\]")).toBe(true);
    expect(call("regex.globs_match", "[a-z]+\\[[0-9]+\\]", 'foo["bar"]')).toBe(false);
    expect(call("regex.globs_match", "a+", "a*a*")).toBe(true);
    expect(call("regex.globs_match", ".*", "abc")).toBe(true);
  });

  it("reports invalid globs with gintersect's messages", () => {
    expect(error("regex.globs_match", "pqrs]", "[a-b]+")?.message).toBe(
      "regex.globs_match: input:pqrs], pos:5, set-close ']' with no preceding '[': the input provided is invalid",
    );
    expect(error("regex.globs_match", "a", "+a")?.message).toBe(
      "regex.globs_match: input:+a, pos:1, flag '+' must be preceded by a non-flag: the input provided is invalid",
    );
    expect(error("regex.globs_match", "[ab", "a")?.message).toBe(
      "regex.globs_match: input:[ab, pos:3, found [ without matching ]: the input provided is invalid",
    );
    expect(error("regex.globs_match", "[b-a]", "a")?.message).toBe(
      "regex.globs_match: input:[b-a], pos:4, range is out of order: 'a' comes before 'b' in Unicode: the input provided is invalid",
    );
  });
});

describe("the pattern cache", () => {
  it("keeps the most recently used entries up to its capacity", () => {
    const cache = new LruCache<string, number>(2);
    let computed = 0;
    const get = (k: string) => cache.get(k, () => ++computed);
    get("a");
    get("b");
    get("a");
    get("c"); // evicts b, the least recently used
    expect(cache.size).toBe(2);
    get("a");
    expect(computed).toBe(3);
    get("b");
    expect(computed).toBe(4);
  });
});

describe("in a compiled policy", () => {
  it("runs the regex builtins through the SDK as host builtins", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := {
  "match": regex.match("^a+$", input.s),
  "find": regex.find_n("a", input.s, 2),
  "replace": regex.replace(input.s, "a(a)", "<$1>"),
  "split": regex.split("a", "bab"),
  "globs": regex.globs_match("a.*", "ab+"),
  "template": regex.template_match("id:{[0-9]+}", "id:42", "{", "}"),
}`,
        },
      ],
      { entrypoints: ["p/r"] },
    );
    expect(built.errors).toEqual([]);
    if (!built.wasm) throw new Error("no module");
    const policy = await loadCompiledPolicy({ wasm: built.wasm });
    const [result] = policy.evaluate({ s: "aaa" }, "p/r");
    expect(result).toEqual({
      result: {
        match: true,
        find: ["a", "a"],
        replace: "<a>a",
        split: ["b", "b"],
        globs: true,
        template: true,
      },
    });
  });
});
