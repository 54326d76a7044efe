import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { NumberKind, PathError, ValueType } from "../../../src/rego/runtime/index.ts";
import { RawRuntime, RuntimeAbort } from "./harness.ts";

let rt: RawRuntime;
beforeEach(() => {
  rt = new RawRuntime();
});

/** Values in OPA's total order (strictly increasing), in Rego value syntax. */
const ORDERED = [
  "null",
  "false",
  "true",
  "-1e400",
  "-123456789012345678901234567890",
  "-9223372036854775809",
  "-9223372036854775808",
  "-1.5",
  "-1",
  "-0.5",
  "0",
  "1e-400",
  "0.1",
  "0.5",
  "1",
  "1.0000000000000000000001",
  "1.5",
  "2",
  "10",
  "9223372036854775807",
  "9223372036854775808",
  "123456789012345678901234567890",
  "1.5e300",
  '""',
  '"A"',
  '"a"',
  '"ab"',
  '"b"',
  '"é"',
  "[]",
  "[null]",
  "[1]",
  "[1,2]",
  "[1,3]",
  '[2,"x"]',
  "{}",
  "{1:0}",
  '{"a":1}',
  '{"a":1,"b":0}',
  '{"a":2}',
  '{"b":0}',
  "set()",
  "{1}",
  "{1,2}",
  "{2}",
  "{[1]}",
];

describe("JSON parsing and serialization", () => {
  it("round-trips nested empties, duplicates and unsorted keys", () => {
    expect(rt.json(rt.v('[[],{},[{}],{"a":[]},[[[]]]]', "json"))).toBe('[[],{},[{}],{"a":[]},[[[]]]]');
    expect(rt.json(rt.v('{"a":1,"b":2,"a":3}', "json"))).toBe('{"a":3,"b":2}');
    expect(rt.json(rt.v('{"z":1,"y":{"d":1,"c":2},"x":[3]}', "json"))).toBe(
      '{"x":[3],"y":{"c":2,"d":1},"z":1}',
    );
    expect(rt.json(rt.v(' \n\t{ "a" : [ 1 , true , false , null ] } \r\n', "json"))).toBe(
      '{"a":[1,true,false,null]}',
    );
  });

  it("keeps number text exactly", () => {
    for (const n of [
      "123456789012345678901234567890",
      "-123456789012345678901234567890",
      "1.5e300",
      "1E+5",
      "-0.000",
      "0.1",
      "1.0",
      "9223372036854775807",
      "-9223372036854775808",
      "9223372036854775808",
      "1e-400",
    ]) {
      expect(rt.json(rt.v(n, "json"))).toBe(n);
    }
    expect(rt.json(rt.v("-0", "json"))).toBe("0");
  });

  it("decodes escapes, including surrogate pairs, and re-escapes only what JSON requires", () => {
    const text = '"caf\\u00e9 \\ud83d\\ude00 \\u2028 \\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0001 \\u007f"';
    const v = rt.v(text, "json");
    expect(rt.u8(v)).toBe(ValueType.string);
    const dumped = rt.json(v);
    expect(JSON.parse(dumped)).toBe(JSON.parse(text));
    expect(dumped).toBe('"café 😀 \u2028 \\"q\\" \\\\ / \\u0008\\u000c\\n\\r\\t \\u0001 \u007f"');
    // Lone surrogates become U+FFFD (as Go's encoding/json does).
    expect(rt.json(rt.v('"\\ud800x\\udc00"', "json"))).toBe('"\ufffdx\ufffd"');
    // Raw UTF-8 passes through unchanged.
    expect(rt.json(rt.v('"日本語 ✓"', "json"))).toBe('"日本語 ✓"');
  });

  it("rejects invalid JSON", () => {
    for (const bad of [
      "",
      " ",
      "[1,]",
      "[1 2]",
      '{"a"}',
      '{"a":1,}',
      "{1:2}",
      "01",
      "1.",
      ".5",
      "1e",
      "-",
      "+1",
      "tru",
      "nul",
      '"\\x"',
      '"\\u12g4"',
      '"abc',
      '"a\nb"',
      "[1] x",
      "set()",
      "{1,2}",
      "NaN",
    ]) {
      expect(rt.parse(bad), JSON.stringify(bad)).toBe(0);
    }
    // Invalid UTF-8: overlong, surrogate, truncated, stray continuation byte.
    for (const bytes of [
      [0x22, 0xc0, 0xaf, 0x22],
      [0x22, 0xed, 0xa0, 0x80, 0x22],
      [0x22, 0xe2, 0x82, 0x22],
      [0x22, 0x80, 0x22],
    ]) {
      expect(rt.parse(new Uint8Array(bytes))).toBe(0);
    }
  });

  it("releases the heap used by a failed parse", () => {
    const before = rt.heap();
    const text = rt.write('{"a":[1,2,3],"b":"x" oops');
    const after = rt.heap();
    expect(rt.call("opa_json_parse", text.ptr, text.len)).toBe(0);
    expect(rt.heap()).toBe(after);
    expect(after).toBeGreaterThan(before);
  });

  it("limits nesting depth", () => {
    expect(rt.parse(`${"[".repeat(1000)}${"]".repeat(1000)}`)).not.toBe(0);
    expect(rt.parse(`${"[".repeat(1001)}${"]".repeat(1001)}`)).toBe(0);
  });

  it("parses and prints Rego value syntax", () => {
    const v = rt.v('{"s": {3, 1, "z", 2, 1}, "e": set(), "o": {1: "x", [1]: set( )}}');
    expect(rt.value(v)).toBe('{"e":set(),"o":{1:"x",[1]:set()},"s":{1,2,3,"z"}}');
    expect(rt.json(v)).toBe('{"e":[],"o":{"1":"x","[1]":[]},"s":[1,2,3,"z"]}');
    // Non-string keys are quoted with their JSON text, escaped.
    expect(rt.json(rt.v('{["a\\"b"]: 1, {"k": null}: 2}'))).toBe(
      '{"[\\"a\\\\\\"b\\"]":1,"{\\"k\\":null}":2}',
    );
  });

  it("round-trips arbitrary JSON like JSON.parse/JSON.stringify", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const local = new RawRuntime();
        const dumped = local.json(local.v(text, "json"));
        expect(JSON.parse(dumped)).toEqual(normalize(JSON.parse(text)));
      }),
      { numRuns: 200 },
    );
  });
});

/** Objects come back with sorted keys; JSON equality in toEqual ignores key order anyway. -0 prints as 0. */
function normalize(x: unknown): unknown {
  if (Object.is(x, -0)) return 0;
  if (Array.isArray(x)) return x.map(normalize);
  if (typeof x === "object" && x !== null) {
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, normalize(v)]));
  }
  return x;
}

describe("comparison", () => {
  it("orders values like OPA's ast.Compare", () => {
    const values = ORDERED.map((t) => rt.v(t));
    for (let i = 0; i < values.length; i++) {
      for (let j = 0; j < values.length; j++) {
        const c = rt.call("writ_compare", values[i] ?? 0, values[j] ?? 0);
        expect(c, `${ORDERED[i]} vs ${ORDERED[j]}`).toBe(Math.sign(i - j));
      }
    }
    expect(rt.call("writ_compare", 0, values[0] ?? 0)).toBe(-1);
  });

  it("sorts a set of shuffled values into OPA order", () => {
    const shuffled = [...ORDERED].reverse();
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [shuffled[i], shuffled[j]] = [shuffled[j] ?? "", shuffled[i] ?? ""];
    }
    const fromText = rt.v(`{${shuffled.join(",")}}`);
    const built = rt.call("writ_set");
    for (const t of shuffled) rt.call("writ_set_add", built, rt.v(t));
    const expected = rt.value(rt.v(`[${ORDERED.join(",")}]`));
    expect(rt.value(fromText)).toBe(`{${expected.slice(1, -1)}}`);
    expect(rt.value(built)).toBe(rt.value(fromText));
    expect(rt.call("writ_length", built)).toBe(ORDERED.length);
  });

  it("treats numbers equal across representations", () => {
    const one = [
      rt.v("1"),
      rt.v("1.0"),
      rt.v("1e0"),
      rt.v("10e-1"),
      rt.v("0.01e2"),
      rt.call("writ_number_float", 1.0),
    ];
    for (const a of one) for (const b of one) expect(rt.call("writ_equal", a, b)).toBe(1);
    expect(rt.call("writ_equal", rt.call("writ_number_float", 0.1), rt.v("0.1"))).toBe(1);
    expect(rt.call("writ_equal", rt.call("writ_number_float", 1e20), rt.v("100000000000000000000"))).toBe(1);
    expect(rt.call("writ_compare", rt.call("writ_number_float", 0.1), rt.v("0.10000000000000001"))).toBe(-1);
    expect(
      rt.call("writ_compare", rt.v("9007199254740993"), rt.call("writ_number_float", 9007199254740992)),
    ).toBe(1);
    // Numerically equal keys are the same key: the first key stays, the last value wins (like OPA).
    const o = rt.v('{1: "a", 1.0: "b", 2: "c"}');
    expect(rt.value(o)).toBe('{1:"b",2:"c"}');
    expect(rt.value(rt.call("writ_value_get", o, rt.v("1e0")))).toBe('"b"');
  });

  it("compares strings bytewise", () => {
    expect(rt.call("writ_compare", rt.str("ab"), rt.str("abc"))).toBe(-1);
    expect(rt.call("writ_compare", rt.str("b"), rt.str("abc"))).toBe(1);
    expect(rt.call("writ_compare", rt.str("Z"), rt.str("a"))).toBe(-1);
    expect(rt.call("writ_compare", rt.str("\u00e9"), rt.str("z"))).toBe(1);
    expect(rt.call("writ_equal", rt.str("x"), rt.v('"x"'))).toBe(1);
  });
});

describe("collections", () => {
  it("keeps objects sorted under insertion in any order and finds every key", () => {
    const keys = Array.from({ length: 300 }, (_, i) => `k${(i * 7919) % 1000}`);
    const o = rt.call("writ_object");
    keys.forEach((k, i) => {
      rt.call("writ_object_insert", o, rt.str(k), rt.call("writ_number_int", BigInt(i)));
    });
    const sorted = [...new Set(keys)].sort();
    expect(rt.call("writ_length", o)).toBe(sorted.length);
    sorted.forEach((k, i) => {
      expect(rt.json(rt.call("writ_key_at", o, i))).toBe(JSON.stringify(k));
    });
    keys.forEach((k, i) => {
      expect(rt.json(rt.call("writ_value_get", o, rt.str(k)))).toBe(String(i));
    });
    expect(rt.call("writ_value_get", o, rt.str("missing"))).toBe(0);
    expect(rt.call("writ_object_get", o, rt.v("1"))).toBe(0);
  });

  it("replaces, inserts once and removes", () => {
    const o = rt.v('{"a": 1, "c": 3}');
    rt.call("writ_object_insert", o, rt.str("b"), rt.v("2"));
    rt.call("writ_object_insert", o, rt.str("a"), rt.v("10"));
    expect(rt.json(o)).toBe('{"a":10,"b":2,"c":3}');
    expect(rt.call("writ_object_insert_once", o, rt.str("b"), rt.v("2.0"))).toBe(0);
    expect(rt.call("writ_object_insert_once", o, rt.str("b"), rt.v("3"))).toBe(1);
    expect(rt.call("writ_object_insert_once", o, rt.str("d"), rt.v("4"))).toBe(0);
    expect(rt.json(o)).toBe('{"a":10,"b":2,"c":3,"d":4}');
    expect(rt.call("writ_object_remove", o, rt.str("a"))).toBe(1);
    expect(rt.call("writ_object_remove", o, rt.str("zz"))).toBe(0);
    expect(rt.json(o)).toBe('{"b":2,"c":3,"d":4}');
  });

  it("adds to, looks up in and removes from sets", () => {
    const s = rt.call("writ_set");
    for (const t of ["3", '"x"', "1", "[1]", "1.0", "2", '"x"']) rt.call("writ_set_add", s, rt.v(t));
    expect(rt.value(s)).toBe('{1,2,3,"x",[1]}');
    expect(rt.value(rt.call("writ_value_get", s, rt.v("2.0")))).toBe("2");
    expect(rt.call("writ_set_get", s, rt.v("4"))).toBe(0);
    expect(rt.call("writ_set_remove", s, rt.v("3"))).toBe(1);
    expect(rt.value(s)).toBe('{1,2,"x",[1]}');
    expect(rt.value(rt.call("writ_value_at", s, 3))).toBe("[1]");
  });

  it("indexes arrays with integer numbers only (like OPA's Number.Int)", () => {
    const a = rt.v('["a", "b", "c"]');
    expect(rt.json(rt.call("writ_value_get", a, rt.v("1")))).toBe('"b"');
    expect(rt.json(rt.call("writ_value_get", a, rt.call("writ_number_float", 2.0)))).toBe('"c"');
    for (const k of ["3", "-1", "1.5", "1.0", '"1"', "null"])
      expect(rt.call("writ_value_get", a, rt.v(k)), k).toBe(0);
    expect(rt.call("writ_value_get", rt.str("abc"), rt.v("0"))).toBe(0);
    expect(rt.json(rt.call("writ_key_at", a, 2))).toBe("2");
    expect(rt.json(rt.call("writ_value_at", a, 2))).toBe('"c"');
    expect(rt.call("writ_value_at", a, 3)).toBe(0);
    expect(rt.call("writ_array_get", a, 0)).toBe(rt.call("writ_value_at", a, 0));
  });

  it("builds arrays by appending past their capacity", () => {
    const a = rt.call("writ_array", 1);
    for (let i = 0; i < 100; i++) rt.call("writ_array_append", a, rt.call("writ_number_int", BigInt(i)));
    expect(rt.json(a)).toBe(JSON.stringify(Array.from({ length: 100 }, (_, i) => i)));
    rt.call("writ_array_set", a, 0, rt.call("writ_null"));
    expect(rt.json(rt.call("writ_value_at", a, 0))).toBe("null");
    expect(() => rt.call("writ_array_set", a, 100, 0)).toThrow("array index out of range");
  });

  it("reports types, lengths and truthiness", () => {
    const types = ["null", "true", "1", '"héllo"', "[1,2]", '{"a":1}', "{1,2,3}"].map((t) => rt.v(t));
    expect(types.map((v) => rt.call("writ_type", v))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(types.map((v) => rt.call("writ_length", v))).toEqual([0, 0, 0, 6, 2, 1, 3]);
    expect(rt.call("writ_type", 0)).toBe(0);
    expect([rt.v("false"), rt.v("true"), rt.v("0"), 0].map((v) => rt.call("writ_truthy", v))).toEqual([
      0, 1, 1, 0,
    ]);
    expect([rt.v("false"), rt.v("true"), rt.v("1")].map((v) => rt.call("writ_is_true", v))).toEqual([
      0, 1, 0,
    ]);
    expect(rt.call("writ_boolean", 1)).toBe(rt.v("true"));
    expect(rt.call("writ_null")).toBe(rt.v("null"));
  });

  it("copies shallowly and deeply", () => {
    const src = rt.v('{"a": {"b": [1]}, "s": {1}}');
    const shallow = rt.call("writ_value_shallow_copy", src);
    const deep = rt.call("writ_value_deep_copy", src);
    rt.call("writ_object_insert", src, rt.str("z"), rt.v("0"));
    const inner = rt.call("writ_value_get", src, rt.str("a"));
    rt.call("writ_object_insert", inner, rt.str("c"), rt.v("2"));
    expect(rt.json(shallow)).toBe('{"a":{"b":[1],"c":2},"s":[1]}');
    expect(rt.json(deep)).toBe('{"a":{"b":[1]},"s":[1]}');
    expect(rt.call("writ_value_shallow_copy", rt.v("1.5"))).toBeGreaterThan(0);
  });

  it("merges objects deeply", () => {
    const a = rt.v('{"x": {"p": 1, "q": 2}, "y": 1, "only_a": true}');
    const b = rt.v('{"x": {"q": 3, "r": 4}, "y": 2, "only_b": false}');
    expect(rt.json(rt.call("writ_object_merge", a, b, 0))).toBe(
      '{"only_a":true,"only_b":false,"x":{"p":1,"q":2,"r":4},"y":1}',
    );
    expect(rt.call("writ_object_merge", a, b, 1)).toBe(0);
    const c = rt.v('{"x": {"q": 2.0, "r": 4}, "y": 1}');
    expect(rt.json(rt.call("writ_object_merge", a, c, 1))).toBe(
      '{"only_a":true,"x":{"p":1,"q":2,"r":4},"y":1}',
    );
    expect(rt.call("writ_object_merge", 0, c, 1)).toBe(c);
    expect(rt.json(a)).toBe('{"only_a":true,"x":{"p":1,"q":2},"y":1}');
  });
});

describe("numbers", () => {
  const kind = (v: number): number => rt.u8(v + 1);

  it("picks the representation", () => {
    expect(kind(rt.v("42"))).toBe(NumberKind.int);
    expect(kind(rt.v("9223372036854775808"))).toBe(NumberKind.ref);
    expect(kind(rt.v("4.2"))).toBe(NumberKind.ref);
    expect(kind(rt.call("writ_number_float", 4.5))).toBe(NumberKind.float);
    expect(kind(rt.call("writ_number_float", 4.0))).toBe(NumberKind.int);
    expect(kind(rt.call("writ_number_float", 1e19))).toBe(NumberKind.float);
    const text = rt.write("-12");
    expect(kind(rt.call("writ_number_ref", text.ptr, text.len))).toBe(NumberKind.int);
    const bad = rt.write("1.2.3");
    expect(() => rt.call("writ_number_ref", bad.ptr, bad.len)).toThrow(RuntimeAbort);
  });

  it("converts to i64 and f64", () => {
    const isInt = (t: string): number => rt.call("writ_number_is_int", rt.v(t));
    const toI64 = (v: number): unknown => rt.raw("writ_number_to_i64", v);
    expect(["1", "1.0", "1e3", "-9223372036854775808", "12.50e1", "0", "12.55e1"].map(isInt)).toEqual([
      1, 1, 1, 1, 1, 1, 0,
    ]);
    expect(["1.5", "9223372036854775808", "1e19", "1e-3", '"1"'].map(isInt)).toEqual([0, 0, 0, 0, 0]);
    expect(toI64(rt.v("1.2e3"))).toBe(1200n);
    expect(toI64(rt.v("-9223372036854775808"))).toBe(-9223372036854775808n);
    expect(toI64(rt.call("writ_number_float", -3.0))).toBe(-3n);
    expect(rt.raw("writ_number_to_f64", rt.v("1.5e300"))).toBe(1.5e300);
    expect(rt.raw("writ_number_to_f64", rt.v("0.1"))).toBe(0.1);
    expect(rt.raw("writ_number_to_f64", rt.v("123456789012345678901234567890"))).toBe(1.2345678901234568e29);
    expect(rt.raw("writ_number_to_f64", rt.v("-7"))).toBe(-7);
    expect(Number.isNaN(rt.raw("writ_number_to_f64", rt.v('"x"')))).toBe(true);
  });

  it("exposes exact decimal forms and builds numbers from them", () => {
    const decimal = (v: number): [number, string, number] => {
      const d = rt.call("writ_number_decimal", v);
      const n = rt.u32(d + 4);
      const digits = new TextDecoder().decode(rt.bytes().subarray(rt.u32(d + 12), rt.u32(d + 12) + n));
      return [rt.i32(d), digits, rt.i32(d + 8)];
    };
    expect(decimal(rt.v("-123.4500e2"))).toEqual([-1, "12345", 5]);
    expect(decimal(rt.v("0.00120"))).toEqual([1, "12", -2]);
    expect(decimal(rt.v("0"))).toEqual([0, "", 0]);
    expect(decimal(rt.v("1200"))).toEqual([1, "12", 4]);
    expect(decimal(rt.call("writ_number_float", 0.25))).toEqual([1, "25", 0]);
    expect(decimal(rt.v("123456789012345678901234567890"))).toEqual([1, "12345678901234567890123456789", 30]);
    const a = rt.call("writ_number_decimal", rt.v("2.5"));
    const b = rt.call("writ_number_decimal", rt.v("25e-1"));
    expect(rt.call("writ_decimal_compare", a, b)).toBe(0);

    const fromDecimal = (sign: number, digits: string, exp: number): string => {
      const d = rt.write(digits);
      return rt.json(rt.call("writ_number_from_decimal", sign, d.ptr, d.len, exp));
    };
    expect(fromDecimal(1, "12", 4)).toBe("1200");
    expect(fromDecimal(-1, "0012300", 5)).toBe("-123");
    expect(fromDecimal(1, "12345", 2)).toBe("12.345");
    expect(fromDecimal(1, "5", -2)).toBe("0.005");
    expect(fromDecimal(1, "123456789012345678901234567890", 30)).toBe("123456789012345678901234567890");
    expect(fromDecimal(-1, "15", 301)).toBe("-1.5e300");
    expect(fromDecimal(1, "7", -20)).toBe("7e-21");
    expect(fromDecimal(0, "99", 1)).toBe("0");
  });

  it("prints floats like OPA/Go", () => {
    const f = (x: number): string => rt.json(rt.call("writ_number_float", x));
    expect(f(0.1)).toBe("0.1");
    expect(f(2.5)).toBe("2.5");
    expect(f(-0.001)).toBe("-0.001");
    expect(f(3)).toBe("3");
    expect(f(-0)).toBe("0");
    expect(f(0.0001)).toBe("0.0001");
    expect(f(0.00001)).toBe("1e-05");
    expect(f(123456.5)).toBe("123456.5");
    expect(f(1234567.5)).toBe("1.2345675e+06");
    expect(f(1e21)).toBe("1000000000000000000000");
    expect(f(1.5e300)).toBe(`15${"0".repeat(299)}`);
    expect(f(1 / 3)).toBe("0.3333333333333333");
    expect(f(5e-324)).toBe("5e-324");
    expect(() => f(Number.NaN)).toThrow("cannot serialize a non-finite number");
    expect(() => f(Number.POSITIVE_INFINITY)).toThrow(RuntimeAbort);
  });

  it("round-trips doubles through their printed form", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const local = new RawRuntime();
        const printed = local.json(local.call("writ_number_float", x));
        expect(Number(printed)).toBe(Object.is(x, -0) ? 0 : x);
      }),
      { numRuns: 500 },
    );
  });
});

describe("data documents", () => {
  const path = (...keys: string[]): number => rt.v(JSON.stringify(keys), "json");

  it("adds values at paths, creating objects on the way", () => {
    const data = rt.v('{"a": {"b": 123}, "s": "x"}', "json");
    expect(rt.call("opa_value_add_path", data, path("a", "x", "y"), rt.v('{"foo": "bar"}'))).toBe(
      PathError.ok,
    );
    expect(rt.json(data)).toBe('{"a":{"b":123,"x":{"y":{"foo":"bar"}}},"s":"x"}');
    expect(rt.call("opa_value_add_path", data, path("a", "b"), rt.v("[1]"))).toBe(PathError.ok);
    expect(rt.json(data)).toBe('{"a":{"b":[1],"x":{"y":{"foo":"bar"}}},"s":"x"}');
    expect(rt.call("opa_value_add_path", data, path("s", "t"), rt.v("1"))).toBe(PathError.invalidType);
    expect(rt.call("opa_value_add_path", data, path(), rt.v("1"))).toBe(PathError.invalidPath);
    expect(rt.call("opa_value_add_path", data, rt.v('["a", 1]'), rt.v("1"))).toBe(PathError.invalidPath);
    expect(rt.call("opa_value_add_path", data, rt.v('"a"'), rt.v("1"))).toBe(PathError.invalidPath);
    expect(rt.json(data)).toBe('{"a":{"b":[1],"x":{"y":{"foo":"bar"}}},"s":"x"}');
  });

  it("removes values at paths", () => {
    const data = rt.v('{"a": {"b": 1, "c": 2}, "d": 3}', "json");
    expect(rt.call("opa_value_remove_path", data, path("a", "b"))).toBe(PathError.ok);
    expect(rt.call("opa_value_remove_path", data, path("missing", "x"))).toBe(PathError.ok);
    expect(rt.call("opa_value_remove_path", data, path("d", "x"))).toBe(PathError.invalidType);
    expect(rt.call("opa_value_remove_path", data, path("d"))).toBe(PathError.ok);
    expect(rt.json(data)).toBe('{"a":{"c":2}}');
    expect(rt.call("opa_value_remove_path", data, path())).toBe(PathError.invalidPath);
  });
});

describe("path updates for generated code", () => {
  it("inserts at paths without mutating shared values", () => {
    const shared = rt.v('{"keep": 1}');
    const root = rt.call("writ_object");
    expect(rt.call("writ_object_insert_path", root, rt.v('["a"]'), shared, 0)).toBe(0);
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "b", "c"]'), rt.v("1"), 0)).toBe(0);
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "b", "d"]'), rt.v("2"), 0)).toBe(0);
    expect(rt.json(root)).toBe('{"a":{"b":{"c":1,"d":2},"keep":1}}');
    expect(rt.json(shared)).toBe('{"keep":1}');
    // once: equal values are fine, different ones conflict, non-objects in the way conflict.
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "b", "c"]'), rt.v("1.0"), 1)).toBe(0);
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "b", "c"]'), rt.v("3"), 1)).toBe(1);
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "keep", "x"]'), rt.v("3"), 1)).toBe(1);
    expect(rt.json(root)).toBe('{"a":{"b":{"c":1,"d":2},"keep":1}}');
    // Non-strict: a non-object in the way is replaced; keys can be any value.
    expect(rt.call("writ_object_insert_path", root, rt.v('["a", "keep", 1]'), rt.v("3"), 0)).toBe(0);
    expect(rt.value(root)).toBe('{"a":{"b":{"c":1,"d":2},"keep":{1:3}}}');
    expect(rt.call("writ_object_insert_path", root, rt.v("[]"), rt.v("3"), 1)).toBe(0);
  });

  it("adds to sets at paths", () => {
    const sharedSet = rt.v("{1}");
    const root = rt.v('{"x": {1}}');
    rt.call("writ_object_insert", root, rt.str("y"), sharedSet);
    rt.call("writ_object_set_add_path", root, rt.v('["y"]'), rt.v("2"));
    rt.call("writ_object_set_add_path", root, rt.v('["y"]'), rt.v("0"));
    rt.call("writ_object_set_add_path", root, rt.v('["z", "w"]'), rt.v('"a"'));
    rt.call("writ_object_set_add_path", root, rt.v('["z", "w"]'), rt.v('"a"'));
    expect(rt.value(root)).toBe('{"x":{1},"y":{0,1,2},"z":{"w":{"a"}}}');
    expect(rt.value(sharedSet)).toBe("{1}");
  });

  it("upserts into copies", () => {
    const input = rt.v('{"user": {"name": "a", "roles": ["x"]}, "other": 1}');
    const copy = rt.call("writ_upsert", input, rt.v('["user", "name"]'), rt.v('"b"'));
    expect(rt.json(copy)).toBe('{"other":1,"user":{"name":"b","roles":["x"]}}');
    expect(rt.json(input)).toBe('{"other":1,"user":{"name":"a","roles":["x"]}}');
    expect(rt.json(rt.call("writ_upsert", 0, rt.v('["a", "b"]'), rt.v("1")))).toBe('{"a":{"b":1}}');
    expect(rt.json(rt.call("writ_upsert", input, rt.v('["other", "x"]'), rt.v("1")))).toBe(
      '{"other":{"x":1},"user":{"name":"a","roles":["x"]}}',
    );
    const five = rt.v("5");
    expect(rt.call("writ_upsert", input, rt.v("[]"), five)).toBe(five);
  });

  it("appends in expressions and prints cross products", () => {
    const a = rt.call("writ_array", 0);
    expect(rt.call("writ_array_appended", a, rt.v("1"))).toBe(a);
    rt.call("writ_print", rt.v('[{"x"}, {1, [2]}, set()]'));
    rt.call("writ_print", rt.v('["raw", 1, {"a": set()}]'));
    rt.call("writ_print", rt.v("[]"));
    expect(rt.printed).toEqual(["x 1 <undefined>", "x [2] <undefined>", 'raw 1 {"a":set()}', ""]);
    const msg = rt.write("hello");
    rt.call("writ_println", msg.ptr, msg.len);
    expect(rt.printed.at(-1)).toBe("hello");
  });
});

describe("heap", () => {
  it("aligns allocations, reclaims the last block and resets", () => {
    rt.call("opa_heap_ptr_set", rt.heap() + 3);
    const p = rt.call("opa_malloc", 5);
    expect(p % 8).toBe(0);
    const q = rt.call("opa_malloc", 16);
    rt.call("opa_free", p);
    expect(rt.call("opa_malloc", 1)).toBeGreaterThan(q);
    rt.call("opa_free", q + 8);
    const r = rt.call("opa_malloc", 8);
    rt.call("opa_free", r);
    expect(rt.call("opa_malloc", 8)).toBe(r);
  });

  it("grows memory for large values", () => {
    const small = new RawRuntime(undefined, 1);
    const big = JSON.stringify(Array.from({ length: 50_000 }, (_, i) => ({ id: i, name: `user-${i}` })));
    const v = small.v(big, "json");
    expect(small.memory.buffer.byteLength).toBeGreaterThan(big.length);
    expect(small.json(v)).toBe(big);
  });

  it("dumps into fresh memory without clobbering live values", () => {
    const v = rt.v('{"k": [1, 2, {"x": "y"}]}');
    const first = rt.call("opa_json_dump", v);
    const second = rt.call("opa_json_dump", v);
    expect(second).toBeGreaterThan(first);
    expect(rt.cstring(first)).toBe(rt.cstring(second));
    expect(rt.json(rt.call("writ_to_json_string", v, 0))).toBe(JSON.stringify('{"k":[1,2,{"x":"y"}]}'));
    const s = rt.call("writ_to_json_string", rt.v("{1}"), 1);
    expect(rt.json(rt.call("writ_parse_string", s, 1))).toBe("[1]");
    expect(rt.call("writ_parse_string", s, 0)).toBe(0);
  });
});

describe("errors", () => {
  it("formats located errors", () => {
    const file = rt.write("module.rego");
    const msg = rt.write("var assignment conflict");
    expect(() => rt.call("writ_error_at", file.ptr, file.len, 3, 1, msg.ptr, msg.len)).toThrow(
      new RuntimeAbort("module.rego:3:1: var assignment conflict"),
    );
    const raw = rt.write("object insert conflict");
    expect(() => rt.call("writ_abort_bytes", raw.ptr, raw.len)).toThrow("object insert conflict");
  });

  it("refuses to serialize undefined", () => {
    expect(() => rt.call("opa_json_dump", 0)).toThrow("cannot serialize an undefined value");
  });
});
