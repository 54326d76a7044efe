import { describe, expect, it } from "vitest";
import { makeString as s } from "../../../src/rego/plan/value.ts";
import { call, errorOf, evalRule, j } from "./helpers.ts";

describe("hex", () => {
  it("encodes UTF-8 bytes and decodes them back", () => {
    expect(call("hex.encode", s("lorem ipsum"))).toBe('"6c6f72656d20697073756d"');
    expect(call("hex.encode", s("é"))).toBe('"c3a9"');
    expect(call("hex.decode", s("C3A9"))).toBe('"é"');
  });
  it("reports Go's errors", () => {
    expect(errorOf("hex.decode", s("fghijkl"))).toBe(
      "eval_builtin_error: hex.decode: encoding/hex: invalid byte: U+0067 'g'",
    );
    expect(errorOf("hex.decode", s("abc"))).toBe(
      "eval_builtin_error: hex.decode: encoding/hex: odd length hex string",
    );
    expect(errorOf("hex.encode", j("1"))).toBe(
      "eval_type_error: hex.encode: operand 1 must be string but got number",
    );
  });
});

describe("base64.is_valid", () => {
  it("accepts padded standard base64 only", () => {
    expect(call("base64.is_valid", s("YWJj"))).toBe("true");
    expect(call("base64.is_valid", s("YWI="))).toBe("true");
    expect(call("base64.is_valid", s("YWI"))).toBe("false");
    expect(call("base64.is_valid", s("YW=j"))).toBe("false");
    expect(call("base64.is_valid", s("a-_b"))).toBe("false");
    expect(call("base64.is_valid", j("1"))).toBe("false");
  });
});

describe("urlquery", () => {
  it("escapes as Go's url.QueryEscape", () => {
    expect(call("urlquery.encode", s("a=b+1 ~é/"))).toBe('"a%3Db%2B1+~%C3%A9%2F"');
    expect(call("urlquery.decode", s("a%3Db%2B1+x"))).toBe('"a=b+1 x"');
    expect(errorOf("urlquery.decode", s("%zz"))).toBe(
      'eval_builtin_error: urlquery.decode: invalid URL escape "%zz"',
    );
  });
  it("encodes objects with sorted keys and repeated values", () => {
    expect(call("urlquery.encode_object", j('{"b": ["x", "y"], "a": "c=d"}'))).toBe('"a=c%3Dd&b=x&b=y"');
    expect(errorOf("urlquery.encode_object", j('{"a": 1}'))).toBe(
      "eval_type_error: urlquery.encode_object: operand 1 values must be string, array[string], or set[string]",
    );
  });
  it("decodes objects as Go's url.ParseQuery", () => {
    expect(call("urlquery.decode_object", s("a=1&b&a=2"))).toBe('{"a": ["1", "2"], "b": [""]}');
    expect(errorOf("urlquery.decode_object", s("a=1;b=2"))).toBe(
      "eval_builtin_error: urlquery.decode_object: invalid semicolon separator in query",
    );
  });
});

describe("uri", () => {
  it("parses as Go's url.Parse", () => {
    expect(call("uri.parse", s("https://u:p@example.com:8080/a%2Fb/c?x=1#f"))).toBe(
      '{"fragment": "f", "hostname": "example.com", "path": "/a/b/c", "port": "8080", "raw_path": "/a%2Fb/c", "raw_query": "x=1", "scheme": "https"}',
    );
    expect(call("uri.parse", s("http://[::1]/"))).toBe(
      '{"hostname": "::1", "path": "/", "raw_path": "/", "scheme": "http"}',
    );
    expect(errorOf("uri.parse", s(":x"))).toBe(
      'eval_builtin_error: uri.parse: parse ":x": missing protocol scheme',
    );
  });
  it("validates", () => {
    expect(call("uri.is_valid", s("http://example.com/x"))).toBe("true");
    expect(call("uri.is_valid", s(""))).toBe("false");
    expect(call("uri.is_valid", s("http://a b/"))).toBe("false");
    expect(call("uri.is_valid", s("a:b/c:d"))).toBe("true");
    expect(call("uri.is_valid", s("a/b:c"))).toBe("true");
    expect(call("uri.is_valid", s("b:c/d%"))).toBe("true");
    expect(call("uri.is_valid", s("/x%zz"))).toBe("false");
  });
});

describe("in a compiled policy", () => {
  it("runs the encoding builtins as host builtins", async () => {
    const result = await evalRule(`package t
p := [hex.encode("hi"), urlquery.encode("a b"), urlquery.decode_object("x=1&x=2"), base64.is_valid("aGk=")]`);
    expect(result).toEqual([{ x: ["6869", "a+b", { x: ["1", "2"] }, true] }]);
  });
});
