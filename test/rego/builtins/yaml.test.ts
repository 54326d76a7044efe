import { describe, expect, it } from "vitest";
import { makeSet, makeString as s } from "../../../src/rego/plan/value.ts";
import { call, errorOf, evalRule, j } from "./helpers.ts";

describe("yaml.unmarshal", () => {
  it("reads YAML 1.1 scalars into JSON values with string keys", () => {
    expect(call("yaml.unmarshal", s("a: yes\n1: 1.5\nt: 2001-12-14\nl:\n- x\n- ~\n"))).toBe(
      '{"1": 1.5, "a": true, "l": ["x", null], "t": "2001-12-14"}',
    );
    expect(call("yaml.unmarshal", s("a: &x {b: 1}\nc: *x\n"))).toBe('{"a": {"b": 1}, "c": {"b": 1}}');
    expect(call("yaml.unmarshal", s("big: 123456789012345678901234"))).toBe(
      '{"big": 123456789012345678901234}',
    );
  });
  it("takes the first document, but every document must parse", () => {
    expect(call("yaml.unmarshal", s("a: 1\n---\nb: 2\n"))).toBe('{"a": 1}');
    expect(call("yaml.is_valid", s("a: 1\n---\n\tb: 2\n"))).toBe("false");
    expect(call("yaml.is_valid", s("  test:\ntest1: hello\n"))).toBe("false");
    expect(call("yaml.is_valid", j("1"))).toBe("false");
    expect(errorOf("yaml.unmarshal", s("[1,2,3"))).toMatch(/^eval_builtin_error: yaml.unmarshal: yaml: /);
  });
});

describe("yaml.marshal", () => {
  it("writes go-yaml v2's style", () => {
    expect(call("yaml.marshal", j('{"b": [1, 2], "a": "yes", "c": "x\\ny", "d": {}, "e": ""}'))).toBe(
      JSON.stringify('a: "yes"\nb:\n- 1\n- 2\nc: |-\n  x\n  y\nd: {}\ne: ""\n'),
    );
    expect(call("yaml.marshal", makeSet([s("b"), s("a")]))).toBe(JSON.stringify("- a\n- b\n"));
  });
});

describe("in a compiled policy", () => {
  it("compiles calls to the YAML builtins", async () => {
    const result = await evalRule(`package t
p := yaml.unmarshal(yaml.marshal({"a": [1, 2]}))`);
    expect(result).toEqual([{ x: { a: [1, 2] } }]);
  });
});
