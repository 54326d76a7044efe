import { describe, expect, it } from "vitest";
import { makeObject, makeSet, makeString as s } from "../../../src/rego/plan/value.ts";
import { call, errorOf, evalRule, j } from "./helpers.ts";

describe("json.filter and json.remove", () => {
  const doc = j('{"a": {"b": 1, "c": [10, 20, 30]}, "d": 2}');
  it("keep or drop the given paths, as strings or arrays of segments", () => {
    expect(call("json.filter", doc, j('["a/c/1", ["d"]]'))).toBe('{"a": {"c": [20]}, "d": 2}');
    expect(call("json.remove", doc, j('["a/c/1", ["d"]]'))).toBe('{"a": {"b": 1, "c": [10, 30]}}');
    expect(call("json.filter", j('{"a~b/c": 1, "x": 2}'), j('["a~0b~1c"]'))).toBe('{"a~b/c": 1}');
  });
  it("are idempotent and let a shorter path win", () => {
    const once = call("json.remove", doc, j('["a/b", "a"]'));
    expect(once).toBe('{"d": 2}');
    expect(call("json.filter", doc, j('["a", "a/b"]'))).toBe('{"a": {"b": 1, "c": [10, 20, 30]}}');
  });
  it("work on sets", () => {
    const withSet = makeObject([[s("s"), makeSet([s("x"), s("y")])]]);
    expect(call("json.remove", withSet, j('["s/x"]'))).toBe('{"s": {"y"}}');
    expect(call("json.filter", withSet, j('["s/x"]'))).toBe('{"s": {"x"}}');
  });
  it("raise OPA's type errors", () => {
    expect(errorOf("json.remove", j("[1]"), j('["a"]'))).toBe(
      "eval_type_error: json.remove: operand 1 must be object but got array",
    );
    expect(errorOf("json.filter", j("{}"), s("a"))).toBe(
      "eval_type_error: json.filter: operand 2 must be one of {set, array} but got string",
    );
    expect(errorOf("json.filter", j("{}"), j("[1]"))).toBe(
      "eval_type_error: json.filter: operand 2 must be one of {set, array} containing string paths or array of path segments but got number",
    );
  });
});

describe("json.patch", () => {
  it("applies RFC 6902 operations", () => {
    const doc = j('{"a": [1, 2, 3], "b": {"c": 1}}');
    expect(
      call(
        "json.patch",
        doc,
        j(`[{"op": "add", "path": "/a/-", "value": 4}, {"op": "remove", "path": "/a/0"},
            {"op": "replace", "path": "/b/c", "value": 5}, {"op": "copy", "from": "/b", "path": "/e"},
            {"op": "move", "from": "/e/c", "path": "/f"}, {"op": "test", "path": "/f", "value": 5}]`),
      ),
    ).toBe('{"a": [2, 3, 4], "b": {"c": 5}, "e": {}, "f": 5}');
  });
  it("is undefined when a patch cannot be applied", () => {
    expect(
      call("json.patch", j('{"a": 1}'), j('[{"op": "test", "path": "/a", "value": 2}]')),
    ).toBeUndefined();
    expect(
      call("json.patch", j('{"a": 1}'), j('[{"op": "add", "path": "/x/y", "value": 2}]')),
    ).toBeUndefined();
    expect(call("json.patch", j("[1, 2]"), j('[{"op": "add", "path": "/01", "value": 2}]'))).toBeUndefined();
    expect(call("json.patch", j("[1, 2]"), j('[{"op": "bogus", "path": "/0"}]'))).toBeUndefined();
    expect(errorOf("json.patch", j("{}"), j("{}"))).toBe(
      "eval_type_error: json.patch: operand 2 must be array but got object",
    );
  });
  it("adds to and removes from sets by value", () => {
    const doc = makeObject([[s("foo"), makeSet([s("a"), s("b")])]]);
    expect(call("json.patch", doc, j('[{"op": "add", "path": "foo/c", "value": "c"}]'))).toBe(
      '{"foo": {"a", "b", "c"}}',
    );
    expect(call("json.patch", doc, j('[{"op": "remove", "path": "foo/a"}]'))).toBe('{"foo": {"b"}}');
    expect(call("json.patch", doc, j('[{"op": "add", "path": "foo/c", "value": "d"}]'))).toBeUndefined();
    expect(call("json.patch", makeSet([j("[1]")]), j('[{"op": "add", "path": [[1], 1], "value": 2}]'))).toBe(
      "{[1, 2]}",
    );
  });
});

describe("json.marshal_with_options", () => {
  it("writes Go's json.MarshalIndent output", () => {
    const v = j('{"b": [1, {"c": []}], "a": {}}');
    expect(call("json.marshal_with_options", v, j('{"indent": "  "}'))).toBe(
      JSON.stringify('{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": []\n    }\n  ]\n}'),
    );
    expect(call("json.marshal_with_options", j("[1]"), j('{"prefix": "> "}'))).toBe(
      JSON.stringify("> [\n> \t1\n> ]"),
    );
    expect(call("json.marshal_with_options", j("[1]"), j('{"pretty": false, "indent": "x"}'))).toBe('"[1]"');
    expect(call("json.marshal_with_options", s("<"), j("{}"))).toBe(JSON.stringify('"\\u003c"'));
  });
  it("rejects unknown options", () => {
    expect(errorOf("json.marshal_with_options", j("[]"), j('{"x": 1}'))).toBe(
      'eval_type_error: json.marshal_with_options: operand 2 object contained unknown key "x"',
    );
  });
});

describe("json.is_valid", () => {
  it("is false for non-strings", () => {
    expect(call("json.is_valid", s('{"a": 1}'))).toBe("true");
    expect(call("json.is_valid", s("{"))).toBe("false");
    expect(call("json.is_valid", j("1"))).toBe("false");
  });
});

describe("JSON Schema", () => {
  const schema = j('{"properties": {"id": {"type": "integer"}}, "required": ["id", "name"]}');
  it("verifies schemas with gojsonschema's messages", () => {
    expect(call("json.verify_schema", schema)).toBe("[true, null]");
    expect(call("json.verify_schema", s('{"type": "nope"}'))).toBe(
      '[false, "jsonschema: has a primitive type that is NOT VALID -- given: /nope/ Expected valid values are:[array boolean integer number null object string]"]',
    );
    expect(call("json.verify_schema", s("{"))).toBe('[false, "jsonschema: invalid JSON string"]');
  });
  it("matches documents, reporting errors in OPA's shape", () => {
    expect(call("json.match_schema", j('{"id": 5, "name": "x"}'), schema)).toBe("[true, []]");
    expect(call("json.match_schema", s('{"id": "5"}'), schema)).toBe(
      '[false, [{"desc": "name is required", "error": "(root): name is required", "field": "(root)", "type": "required"}, {"desc": "Invalid type. Expected: integer, given: string", "error": "id: Invalid type. Expected: integer, given: string", "field": "id", "type": "invalid_type"}]]',
    );
    expect(call("json.match_schema", j('{"v": 1}'), j('{"enum": []}'))?.startsWith("[false, ")).toBe(true);
    expect(errorOf("json.match_schema", j("{}"), j('{"type": 1}'))).toMatch(
      /^eval_builtin_error: json.match_schema: /,
    );
  });
  it("reads draft-04 exclusive bounds", () => {
    const d4 = j(
      '{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"v": {"maximum": 5, "exclusiveMaximum": true}}}',
    );
    expect(call("json.match_schema", j('{"v": 5}'), d4)).toBe(
      '[false, [{"desc": "Must be less than 5", "error": "v: Must be less than 5", "field": "v", "type": "number_lt"}]]',
    );
    expect(call("json.match_schema", j('{"v": 4}'), d4)).toBe("[true, []]");
    expect(errorOf("json.match_schema", j("4"), d4)).toBe(
      "eval_builtin_error: json.match_schema: wrong type, expected string or object",
    );
  });
});

describe("in a compiled policy", () => {
  it("runs the JSON builtins as host builtins", async () => {
    const result = await evalRule(`package t
p := [
  json.remove({"a": 1, "b": 2}, ["a"]),
  json.patch({"a": 1}, [{"op": "add", "path": "/b", "value": 2}]),
  json.marshal_with_options([1], {"indent": " "}),
  json.match_schema({"a": 1}, {"type": "object"}),
]`);
    expect(result).toEqual([{ x: [{ b: 2 }, { a: 1, b: 2 }, "[\n 1\n]", [true, []]] }]);
  });
});
