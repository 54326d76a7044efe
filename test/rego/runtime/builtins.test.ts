import { loadPolicy } from "@open-policy-agent/opa-wasm";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { allBuiltins } from "../../../src/rego/builtins/catalog.ts";
import { Linker } from "../../../src/rego/wasm/index.ts";
import { RawRuntime } from "./harness.ts";

let rt: RawRuntime;
beforeEach(() => {
  rt = new RawRuntime();
});

/**
 * Calls the native builtin `name` (Rego name, e.g. `object.get`) with arguments in Rego value syntax
 * and returns the result in value syntax, or undefined.
 */
function call(name: string, ...args: string[]): string | undefined {
  const values = args.map((a) => rt.v(a));
  const result = rt.call(`writ_builtin_${name.replaceAll(".", "_")}`, ...values);
  return result === 0 ? undefined : rt.value(result);
}

/** Like call, for a string argument given as a JavaScript string. */
function str(s: string): string {
  return JSON.stringify(s);
}

/** Calls a builtin with raw bytes as its single string argument (for invalid UTF-8). */
function callWithBytes(name: string, bytes: number[]): string | undefined {
  const { ptr, len } = rt.write(new Uint8Array(bytes));
  const s = rt.call("writ_string", ptr, len);
  const result = rt.call(`writ_builtin_${name.replaceAll(".", "_")}`, s);
  return result === 0 ? undefined : rt.value(result);
}

/**
 * Operators the code generator inlines, and unification, which never reach the runtime as
 * builtins (internal.print is emitted as a call of the runtime's writ_print).
 */
const INLINED = new Set(["eq", "assign", "equal", "neq", "lt", "lte", "gt", "gte", "internal.print"]);

describe("native builtin exports", () => {
  it("exports every native builtin of the catalog under its writ_builtin_ name", () => {
    const linker = new Linker();
    try {
      const missing = [...allBuiltins().values()]
        .filter((b) => b.implementation === "native" && !INLINED.has(b.name))
        .filter((b) => linker.nativeBuiltin(b.name) === undefined)
        .map((b) => b.name);
      expect(missing).toEqual([]);
    } finally {
      linker.dispose();
    }
  });

  it("runs through the SDK in a compiled policy", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := {
  "count": count("héllo"),
  "big": format_int(18446744073709551617 * 2, 10),
  "upper": upper("straße"),
  "keys": object.keys({"b": 1, "a": 2}),
  "in": 2 in {1, 2},
  "split": strings.split_n("a.b.c", ".", -2),
}`,
        },
      ],
      { entrypoints: ["p/r"] },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadPolicy(built.wasm!);
    const [result] = policy.evaluate({}, "p/r") as [{ result: Record<string, unknown> }];
    expect(result.result).toEqual({
      count: 5,
      big: "36893488147419103234",
      upper: "STRAßE",
      keys: ["a", "b"],
      in: true,
      split: ["b", "c"],
    });
  });
});

describe("arithmetic", () => {
  it("adds, subtracts and multiplies i64 ints, switching to exact big integers on overflow", () => {
    expect(call("plus", "1", "2")).toBe("3");
    expect(call("plus", "9223372036854775807", "1")).toBe("9223372036854775808");
    expect(call("minus", "-9223372036854775808", "1")).toBe("-9223372036854775809");
    expect(call("mul", "2147483647", "2147483647")).toBe("4611686014132420609");
    expect(call("mul", "-9223372036854775808", "-1")).toBe("9223372036854775808");
    expect(call("mul", "4294967296", "4294967296")).toBe("18446744073709551616");
    expect(call("plus", "18446744073709551617", "1")).toBe("18446744073709551618");
    expect(call("minus", "-18446744073709551617", "1")).toBe("-18446744073709551618");
    expect(call("mul", "18446744073709551617", "2")).toBe("36893488147419103234");
    expect(call("plus", "123456789012345678901234567890", "1")).toBe("123456789012345678901234567891");
    expect(call("minus", "18446744073709551617", "18446744073709551617")).toBe("0");
    expect(call("plus", "1e30", "1")).toBe("1000000000000000000000000000001");
  });

  it("is exact on decimals and canonicalizes integral results", () => {
    expect(call("plus", "1.5", "2.5")).toBe("4");
    expect(call("plus", "1", "2.5")).toBe("3.5");
    expect(call("mul", "2.5", "2")).toBe("5");
    expect(call("plus", "0.1", "0.2")).toBe("0.3");
    expect(call("minus", "0.3", "0.1")).toBe("0.2");
    expect(call("mul", "1.1", "1.1")).toBe("1.21");
    expect(call("plus", "10.00", "5")).toBe("15");
    expect(call("mul", "-1.5", "0")).toBe("0");
    expect(call("plus", "1e-400", "1e-400")).toBe("2e-400");
  });

  it("falls back to floats beyond the exact range and is undefined when not finite", () => {
    expect(call("plus", "1e2000000", "1")).toBeUndefined();
    expect(call("mul", "1e300", "1e300")).toBe("1e600");
    expect(call("mul", "1.5e300", "1e300")).toBe("1.5e600");
  });

  it("divides exactly when possible, otherwise as floats; a zero divisor is an error", () => {
    expect(call("div", "6", "3")).toBe("2");
    expect(call("div", "-6", "3")).toBe("-2");
    expect(call("div", "1", "4")).toBe("0.25");
    expect(call("div", "0", "5")).toBe("0");
    expect(call("div", "1", "3")).toBe("0.3333333333333333");
    expect(call("div", "-9223372036854775808", "-1")).toBe("9223372036854775808");
    expect(() => call("div", "1", "0")).toThrow("eval_builtin_error: div: divide by zero");
    expect(() => call("div", "1", "0.0")).toThrow("eval_builtin_error: div: divide by zero");
    expect(call("div", "1.5", "0.5")).toBe("3");
  });

  it("takes remainders of integers of any size with the dividend's sign", () => {
    expect(call("rem", "7", "4")).toBe("3");
    expect(call("rem", "-17", "5")).toBe("-2");
    expect(call("rem", "17", "-5")).toBe("2");
    expect(call("rem", "4.0", "3")).toBe("1");
    expect(call("rem", "-9223372036854775808", "-1")).toBe("0");
    expect(call("rem", "10", "18446744073709551616")).toBe("10");
    expect(call("rem", "5", "55340232221128654848")).toBe("5");
    expect(call("rem", "100", "-18446744073709551616")).toBe("100");
    expect(call("rem", "18446744073709551617", "18446744073709551616")).toBe("1");
    expect(call("rem", "-18446744073709551617", "10")).toBe("-7");
    expect(call("rem", "1e30", "7")).toBe(String(10n ** 30n % 7n));
    expect(() => call("rem", "7", "0")).toThrow("eval_builtin_error: rem: modulo by zero");
    expect(call("rem", "1.1", "1")).toBeUndefined();
  });

  it("rounds half away from zero, ceils and floors exactly", () => {
    expect(call("round", "2.5")).toBe("3");
    expect(call("round", "-2.5")).toBe("-3");
    expect(call("round", "2.4")).toBe("2");
    expect(call("round", "0.49999999999999994")).toBe("0");
    expect(call("round", "-5")).toBe("-5");
    expect(call("round", "10.00")).toBe("10");
    expect(call("round", "999.5")).toBe("1000");
    expect(call("round", "0.05")).toBe("0");
    expect(call("ceil", "1.01")).toBe("2");
    expect(call("ceil", "-1.99999")).toBe("-1");
    expect(call("ceil", "-0.5")).toBe("0");
    expect(call("floor", "-1.5")).toBe("-2");
    expect(call("floor", "0.5")).toBe("0");
    expect(call("floor", "123456789012345678901.5")).toBe("123456789012345678901");
    expect(call("abs", "-5")).toBe("5");
    expect(call("abs", "-9223372036854775808")).toBe("9223372036854775808");
    expect(call("abs", "-2.5")).toBe("2.5");
    expect(call("abs", "-1e400")).toBe("1e400");
  });

  it("leaves floats computed at run time to the float path", () => {
    const third = rt.call("writ_number_float", 1 / 3);
    expect(rt.value(rt.call("writ_builtin_round", third))).toBe("0");
    expect(rt.value(rt.call("writ_builtin_plus", third, rt.v("1")))).toBe("1.3333333333333333");
  });

  it("builds ranges in both directions", () => {
    expect(call("numbers.range", "1", "4")).toBe("[1,2,3,4]");
    expect(call("numbers.range", "2", "-1")).toBe("[2,1,0,-1]");
    expect(call("numbers.range", "3", "3")).toBe("[3]");
    expect(call("numbers.range_step", "0", "10", "3")).toBe("[0,3,6,9]");
    expect(call("numbers.range_step", "10", "0", "5")).toBe("[10,5,0]");
    expect(call("numbers.range_step", "0", "10", "0")).toBeUndefined();
    expect(call("numbers.range", "1.5", "3")).toBeUndefined();
  });

  it("is undefined for operands of the wrong type; minus takes the difference of sets", () => {
    expect(call("plus", "1", '"2"')).toBeUndefined();
    expect(call("mul", "null", "2")).toBeUndefined();
    expect(call("abs", '"x"')).toBeUndefined();
    expect(call("minus", "{1, 2, 3}", "{2, 4}")).toBe("{1,3}");
    expect(call("minus", "{1}", "1")).toBeUndefined();
  });
});

/** Canonical decimal text of mantissa / 10^scale, as the runtime prints exact results. */
function decimalText(mantissa: bigint, scale: number): string {
  const negative = mantissa < 0n;
  const digits = (negative ? -mantissa : mantissa).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, "");
  const text = fraction === "" ? whole : `${whole}.${fraction}`;
  return negative && text !== "0" ? `-${text}` : text;
}

/**
 * A canonical form of decimal number text, `[-]digits e exponent` without leading or trailing zeros,
 * so that equal numbers printed differently (`1e3`, `1000`, `0.0000001`, `1e-7`) compare equal.
 */
function canonicalNumber(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/.exec(text);
  if (!match) return `not a number: ${text}`;
  const [, sign, whole = "", fraction = "", exponent = "0"] = match;
  let digits = (whole + fraction).replace(/^0+/, "");
  let exp = Number(exponent) - fraction.length;
  if (digits === "") return "0";
  while (digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    exp++;
  }
  return `${sign}${digits}e${exp}`;
}

describe("arithmetic properties", () => {
  const bigInts = fc.bigInt({ min: -(10n ** 45n), max: 10n ** 45n });

  it("matches BigInt on integers of any size", () => {
    fc.assert(
      fc.property(bigInts, bigInts, (a, b) => {
        const [x, y] = [a.toString(), b.toString()];
        expect(canonicalNumber(call("plus", x, y))).toBe(canonicalNumber((a + b).toString()));
        expect(canonicalNumber(call("minus", x, y))).toBe(canonicalNumber((a - b).toString()));
        expect(canonicalNumber(call("mul", x, y))).toBe(canonicalNumber((a * b).toString()));
        if (b !== 0n) expect(canonicalNumber(call("rem", x, y))).toBe(canonicalNumber((a % b).toString()));
      }),
      { numRuns: 300 },
    );
  });

  it("is exact on decimal fractions", () => {
    const decimal = fc.record({ m: fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }), scale: fc.nat(6) });
    fc.assert(
      fc.property(decimal, decimal, ({ m: ma, scale: sa }, { m: mb, scale: sb }) => {
        const scale = Math.max(sa, sb);
        const a = ma * 10n ** BigInt(scale - sa);
        const b = mb * 10n ** BigInt(scale - sb);
        const [x, y] = [decimalText(ma, sa), decimalText(mb, sb)];
        expect(canonicalNumber(call("plus", x, y))).toBe(canonicalNumber(decimalText(a + b, scale)));
        expect(canonicalNumber(call("minus", x, y))).toBe(canonicalNumber(decimalText(a - b, scale)));
        expect(canonicalNumber(call("mul", x, y))).toBe(canonicalNumber(decimalText(ma * mb, sa + sb)));
      }),
      { numRuns: 300 },
    );
  });

  it("floors, ceils and rounds decimals exactly", () => {
    const decimal = fc.record({
      m: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
      scale: fc.integer({ min: 1, max: 8 }),
    });
    fc.assert(
      fc.property(decimal, ({ m, scale }) => {
        const unit = 10n ** BigInt(scale);
        const truncated = m / unit;
        const exact = truncated * unit === m;
        const floor = m < 0n && !exact ? truncated - 1n : truncated;
        const ceil = m > 0n && !exact ? truncated + 1n : truncated;
        const twice = 2n * (m < 0n ? -m : m);
        const away = twice >= unit * (2n * (m < 0n ? -truncated : truncated) + 1n);
        const round = away ? truncated + (m < 0n ? -1n : 1n) : truncated;
        const x = decimalText(m, scale);
        expect(call("floor", x)).toBe(floor.toString());
        expect(call("ceil", x)).toBe(ceil.toString());
        expect(call("round", x)).toBe(round.toString());
      }),
      { numRuns: 300 },
    );
  });
});

describe("aggregates", () => {
  it("counts elements, and code points of strings (invalid bytes count one each)", () => {
    expect(call("count", str("héllo"))).toBe("5");
    expect(call("count", str("😀"))).toBe("1");
    expect(call("count", "[1, 2]")).toBe("2");
    expect(call("count", '{"a": 1}')).toBe("1");
    expect(call("count", "set()")).toBe("0");
    expect(call("count", "1")).toBeUndefined();
    expect(callWithBytes("count", [0x61, 0xff, 0xc3, 0xa9, 0xe2, 0x82])).toBe("5");
  });

  it("sums and multiplies exactly", () => {
    expect(call("sum", "[1, 2, 3]")).toBe("6");
    expect(call("sum", "{9223372036854775807, 1, 2}")).toBe("9223372036854775810");
    expect(call("sum", "[-9223372036854775808, -1]")).toBe("-9223372036854775809");
    expect(call("sum", "[1.5, 2.5]")).toBe("4");
    expect(call("sum", "[]")).toBe("0");
    expect(call("product", "[18446744073709551617, 2]")).toBe("36893488147419103234");
    expect(call("product", "[1.5, 2]")).toBe("3");
    expect(call("product", "[]")).toBe("1");
    expect(call("sum", '[1, "2"]')).toBeUndefined();
    expect(call("sum", '{"a": 1}')).toBeUndefined();
  });

  it("finds max and min by OPA's order, undefined when empty", () => {
    expect(call("max", '[1, "a", null]')).toBe('"a"');
    expect(call("min", '[1, "a", null]')).toBe("null");
    expect(call("max", "{1, 3, 2}")).toBe("3");
    expect(call("min", "{1, 3, 2}")).toBe("1");
    expect(call("max", "[]")).toBeUndefined();
    expect(call("min", "set()")).toBeUndefined();
  });

  it("sorts arrays and sets into arrays", () => {
    expect(call("sort", '[3, 1, "a", 2, 1]')).toBe('[1,1,2,3,"a"]');
    expect(call("sort", "{3, 1}")).toBe("[1,3]");
    expect(call("sort", "[]")).toBe("[]");
    expect(call("sort", '"abc"')).toBeUndefined();
  });

  it("tests membership: elements of arrays and sets, values of objects", () => {
    expect(call("internal.member_2", "1", "[0, 1]")).toBe("true");
    expect(call("internal.member_2", "1.0", "{1}")).toBe("true");
    expect(call("internal.member_2", "1", '{"a": 1}')).toBe("true");
    expect(call("internal.member_2", '"a"', '{"a": 1}')).toBe("false");
    expect(call("internal.member_2", '"a"', '"abc"')).toBe("false");
    expect(call("internal.member_3", "1", '"b"', '["a", "b"]')).toBe("true");
    expect(call("internal.member_3", '"a"', "1", '{"a": 1}')).toBe("true");
    expect(call("internal.member_3", '"a"', "2", '{"a": 1}')).toBe("false");
    expect(call("internal.member_3", "1", "1", "{1}")).toBe("true");
    expect(call("internal.member_3", "5", '"b"', '["a", "b"]')).toBe("false");
  });
});

describe("sets", () => {
  it("intersects and unites", () => {
    expect(call("and", "{1, 2, 3}", "{2, 3, 4}")).toBe("{2,3}");
    expect(call("or", "{1, 2}", "{3, 1}")).toBe("{1,2,3}");
    expect(call("intersection", "{{1, 2}, {2, 3}}")).toBe("{2}");
    expect(call("intersection", "set()")).toBe("set()");
    expect(call("union", "{{1, 2}, {2, 3}, {5}}")).toBe("{1,2,3,5}");
    expect(call("union", "set()")).toBe("set()");
    expect(call("and", "{1}", "[1]")).toBeUndefined();
    expect(call("union", "{{1}, [2]}")).toBeUndefined();
  });
});

describe("arrays", () => {
  it("concatenates, slices (clamping), reverses and flattens one level", () => {
    expect(call("array.concat", "[1]", "[2, 3]")).toBe("[1,2,3]");
    expect(call("array.concat", "[]", "[]")).toBe("[]");
    expect(call("array.slice", "[1, 2, 3, 4]", "1", "3")).toBe("[2,3]");
    expect(call("array.slice", "[1, 2, 3, 4]", "-1", "10")).toBe("[1,2,3,4]");
    expect(call("array.slice", "[1, 2, 3, 4]", "3", "1")).toBe("[]");
    expect(call("array.slice", "[1, 2]", "0.5", "1")).toBeUndefined();
    expect(call("array.reverse", "[1, 2, 3]")).toBe("[3,2,1]");
    expect(call("array.reverse", "[]")).toBe("[]");
    expect(call("array.flatten", '[[1, 2], "s", [3, [4]], []]')).toBe('[1,2,"s",3,[4]]');
    expect(call("array.flatten", "42")).toBeUndefined();
  });
});

describe("objects", () => {
  it("gets keys and paths with a default", () => {
    expect(call("object.get", '{"a": 1}', '"a"', "2")).toBe("1");
    expect(call("object.get", '{"a": 1}', '"b"', "2")).toBe("2");
    expect(call("object.get", '{"a": 1}', "[]", "2")).toBe('{"a":1}');
    expect(call("object.get", '{"a": {"b": [{"c": 1}]}}', '["a", "b", 0, "c"]', "2")).toBe("1");
    expect(call("object.get", '{"a": {"b": [1]}}', '["a", "b", "a"]', "2")).toBe("2");
    expect(call("object.get", '{1: {"b": {[1, 2, 3]: 1}}}', '[1, "b", [1, 2, 3]]', "2")).toBe("1");
    expect(call("object.get", '"obj"', '["a"]', "2")).toBeUndefined();
  });

  it("lists keys", () => {
    expect(call("object.keys", '{"b": 1, "a": 2}')).toBe('{"a","b"}');
    expect(call("object.keys", "{}")).toBe("set()");
    expect(call("object.keys", "[1]")).toBeUndefined();
  });

  it("unites recursively, the right side winning", () => {
    expect(call("object.union", '{"a": {"b": 1, "c": 2}, "d": 1}', '{"a": {"b": 3}, "e": 2}')).toBe(
      '{"a":{"b":3,"c":2},"d":1,"e":2}',
    );
    expect(call("object.union", '{"a": {"b": 1}}', '{"a": 2}')).toBe('{"a":2}');
    expect(call("object.union_n", '[{"a": {"b": 2}}, {"a": 4}, {"a": {"c": 3}}]')).toBe('{"a":{"c":3}}');
    expect(call("object.union_n", "[]")).toBe("{}");
    expect(call("object.union_n", '[{"a": 1}, 2]')).toBeUndefined();
  });

  it("removes and filters keys given as an array, set or object", () => {
    expect(call("object.remove", '{"a": 1, "b": 2, "c": 3}', '["a", "c", "x"]')).toBe('{"b":2}');
    expect(call("object.remove", '{"a": 1, "b": 2}', '{"a": 0}')).toBe('{"b":2}');
    expect(call("object.remove", '{"a": 1}', "set()")).toBe('{"a":1}');
    expect(call("object.remove", '{"a": 1}', '"a"')).toBeUndefined();
    expect(call("object.filter", '{"a": 1, "b": 2, "c": 3}', '{"a", "c", "x"}')).toBe('{"a":1,"c":3}');
    expect(call("object.filter", '{"a": 1}', "[]")).toBe("{}");
    const many = `{${Array.from({ length: 2000 }, (_, i) => `"k${i}": ${i}`).join(", ")}}`;
    expect(call("object.filter", many, '["k5", "k1999"]')).toBe('{"k1999":1999,"k5":5}');
  });

  it("tests subsets", () => {
    expect(
      call("object.subset", '{"a": {"b": [1, 2, 3]}, "c": {1, 2}}', '{"a": {"b": [2, 3]}, "c": {1}}'),
    ).toBe("true");
    expect(call("object.subset", '{"a": 1}', '{"a": 2}')).toBe("false");
    expect(call("object.subset", "[1, 2, 3]", "[1, 3]")).toBe("false");
    expect(call("object.subset", "[1, 2, 3]", "{3, 1}")).toBe("true");
    expect(call("object.subset", "{1, 2}", "{2}")).toBe("true");
    expect(call("object.subset", '{"a": 1}', "[1]")).toBeUndefined();
  });
});

describe("strings", () => {
  it("concatenates arrays and (sorted) sets of strings", () => {
    expect(call("concat", str(","), '["a", "b", "c"]')).toBe('"a,b,c"');
    expect(call("concat", str("--"), '{"b", "a"}')).toBe('"a--b"');
    expect(call("concat", str(","), "[]")).toBe('""');
    expect(call("concat", str(","), "[1]")).toBeUndefined();
  });

  it("searches bytes and code points", () => {
    expect(call("contains", str("abc"), str("bc"))).toBe("true");
    expect(call("contains", str("abc"), str(""))).toBe("true");
    expect(call("startswith", str("abc"), str("ab"))).toBe("true");
    expect(call("endswith", str("abc"), str("ab"))).toBe("false");
    expect(call("indexof", str("héllo"), str("l"))).toBe("2");
    expect(call("indexof", str("hello"), str("z"))).toBe("-1");
    expect(call("indexof", str("hello"), str(""))).toBeUndefined();
    expect(call("indexof_n", str("aaaa"), str("aa"))).toBe("[0,1,2]");
    expect(call("indexof_n", str("ééé"), str("é"))).toBe("[0,1,2]");
    expect(call("strings.count", str("cheese"), str("e"))).toBe("3");
    expect(call("strings.count", str("aaaa"), str("aa"))).toBe("2");
    expect(call("strings.count", str("héllo"), str(""))).toBe("6");
    expect(call("strings.any_prefix_match", '["abc", "xyz"]', str("xy"))).toBe("true");
    expect(call("strings.any_prefix_match", str("abc"), '{"b", "c"}')).toBe("false");
    expect(call("strings.any_prefix_match", str("abc"), "[]")).toBe("false");
    expect(call("strings.any_suffix_match", '{"abc"}', '["bc"]')).toBe("true");
    expect(call("strings.any_suffix_match", "[1]", str("a"))).toBeUndefined();
  });

  it("maps case per code point like Go's unicode.ToUpper/ToLower", () => {
    expect(call("upper", str("héllo wörld"))).toBe(str("HÉLLO WÖRLD"));
    expect(call("upper", str("straße ǆ ᾳ ſ ı"))).toBe(str("STRAßE Ǆ ᾼ S I"));
    expect(call("lower", str("ΣΑΣ İ Ǆ КИРИЛЛИЦА"))).toBe(str("σασ i ǆ кириллица"));
    expect(call("lower", str("abc"))).toBe(str("abc"));
    expect(callWithBytes("upper", [0x61, 0xff])).toBe(str("A\ufffd"));
    expect(call("upper", "1")).toBeUndefined();
  });

  it("splits like Go's strings.Split", () => {
    expect(call("split", str("a.b.c"), str("."))).toBe('["a","b","c"]');
    expect(call("split", str("a..b"), str("."))).toBe('["a","","b"]');
    expect(call("split", str("abc"), str(","))).toBe('["abc"]');
    expect(call("split", str("aé"), str(""))).toBe('["a","é"]');
    expect(call("split", str(""), str(""))).toBe("[]");
    expect(call("split", str(""), str("."))).toBe('[""]');
  });

  it("takes the first or last n parts with strings.split_n", () => {
    expect(call("strings.split_n", str("a.b.c.d"), str("."), "2")).toBe('["a","b"]');
    expect(call("strings.split_n", str("a.b.c.d"), str("."), "10")).toBe('["a","b","c","d"]');
    expect(call("strings.split_n", str("a.b.c.d"), str("."), "0")).toBe("[]");
    expect(call("strings.split_n", str("a.b.c.d"), str("."), "-1")).toBe('["d"]');
    expect(call("strings.split_n", str("a.b.c.d"), str("."), "-10")).toBe('["a","b","c","d"]');
    expect(call("strings.split_n", str("abc"), str(""), "-2")).toBe('["b","c"]');
    expect(call("strings.split_n", str(""), str("."), "2")).toBe('[""]');
    expect(call("strings.split_n", str("a.b"), str("."), "1.5")).toBeUndefined();
  });

  it("replaces like Go's strings.NewReplacer", () => {
    expect(call("replace", str("aaa"), str("a"), str("bb"))).toBe(str("bbbbbb"));
    expect(call("replace", str("abcabc"), str("bc"), str(""))).toBe(str("aa"));
    expect(call("replace", str("abc"), str(""), str("-"))).toBe(str("-a-b-c-"));
    expect(call("replace", str("abc"), str("x"), str("y"))).toBe(str("abc"));
    expect(call("strings.replace_n", '{"a": "1", "ab": "2", "c": "3"}', str("abcab"))).toBe(str("1b31b"));
    expect(call("strings.replace_n", '{"ab": "x", "b": "y"}', str("abb"))).toBe(str("xy"));
    expect(call("strings.replace_n", '{"": "-", "b": "y"}', str("ab"))).toBe(str("-a-y-"));
    expect(call("strings.replace_n", "{}", str("ab"))).toBe(str("ab"));
    expect(call("strings.replace_n", '{"a": 1}', str("abc"))).toBeUndefined();
  });

  it("takes substrings by code point", () => {
    expect(call("substring", str("héllo"), "1", "3")).toBe(str("éll"));
    expect(call("substring", str("hello"), "1", "-1")).toBe(str("ello"));
    expect(call("substring", str("hello"), "3", "100")).toBe(str("lo"));
    expect(call("substring", str("hello"), "10", "1")).toBe(str(""));
    expect(call("substring", str(""), "0", "1")).toBe(str(""));
    expect(() => call("substring", str("hello"), "-1", "1")).toThrow(
      "eval_builtin_error: substring: negative offset",
    );
    expect(call("substring", str("hello"), "1.5", "1")).toBeUndefined();
  });

  it("trims cutsets, prefixes, suffixes and Unicode white space", () => {
    expect(call("trim", str("  xhellox  "), str(" x"))).toBe(str("hello"));
    expect(call("trim", str("abc"), str(""))).toBe(str("abc"));
    expect(call("trim_left", str("ééabcé"), str("é"))).toBe(str("abcé"));
    expect(call("trim_right", str("ééabcé"), str("é"))).toBe(str("ééabc"));
    expect(call("trim", str("aaa"), str("a"))).toBe(str(""));
    expect(call("trim_prefix", str("abc"), str("ab"))).toBe(str("c"));
    expect(call("trim_prefix", str("abc"), str("b"))).toBe(str("abc"));
    expect(call("trim_suffix", str("abc"), str("bc"))).toBe(str("a"));
    expect(call("trim_space", str("\u00a0 \t hi there \n\u3000"))).toBe(str("hi there"));
    expect(call("trim_space", str(" \u2028 "))).toBe(str(""));
  });

  it("formats integers in bases 2, 8, 10 and 16, truncating toward zero", () => {
    expect(call("format_int", "255", "16")).toBe(str("ff"));
    expect(call("format_int", "-255", "2")).toBe(str("-11111111"));
    expect(call("format_int", "8", "8")).toBe(str("10"));
    expect(call("format_int", "0", "2")).toBe(str("0"));
    expect(call("format_int", "-3.7", "10")).toBe(str("-3"));
    expect(call("format_int", "-0.5", "10")).toBe(str("0"));
    expect(call("format_int", "-9223372036854775808", "16")).toBe(str("-8000000000000000"));
    expect(call("format_int", "18446744073709551617", "16")).toBe(str("10000000000000001"));
    expect(call("format_int", "-18446744073709551617.9", "10")).toBe(str("-18446744073709551617"));
    expect(call("format_int", "1e30", "2")).toBe(str((10n ** 30n).toString(2)));
    expect(call("format_int", "1e30", "8")).toBe(str((10n ** 30n).toString(8)));
    expect(call("format_int", "1e2000", "16")).toBe(str((10n ** 2000n).toString(16)));
    expect(call("format_int", "1e999999999", "10")).toBeUndefined();
    expect(call("format_int", "5", "3")).toBeUndefined();
  });

  it("reverses code points", () => {
    expect(call("strings.reverse", str("héllo😀"))).toBe(str("😀olléh"));
    expect(call("strings.reverse", str(""))).toBe(str(""));
  });
});

describe("types", () => {
  it("tests types and names them", () => {
    expect(call("is_number", "1.5")).toBe("true");
    expect(call("is_number", '"1"')).toBe("false");
    expect(call("is_string", '"1"')).toBe("true");
    expect(call("is_boolean", "false")).toBe("true");
    expect(call("is_array", "[]")).toBe("true");
    expect(call("is_set", "set()")).toBe("true");
    expect(call("is_object", "{}")).toBe("true");
    expect(call("is_null", "null")).toBe("true");
    expect(call("is_null", "false")).toBe("false");
    const names = ["null", "true", "1", '"s"', "[]", "{}", "set()"].map((v) => call("type_name", v));
    expect(names).toEqual(['"null"', '"boolean"', '"number"', '"string"', '"array"', '"object"', '"set"']);
  });

  it("converts to numbers", () => {
    expect(call("to_number", str("-42.0"))).toBe("-42.0");
    expect(call("to_number", str("3"))).toBe("3");
    expect(call("to_number", str("+5"))).toBe("5");
    expect(call("to_number", str(".5"))).toBe("0.5");
    expect(call("to_number", str("5."))).toBe("5");
    expect(call("to_number", str("007"))).toBe("7");
    expect(call("to_number", str("1e3"))).toBe("1e3");
    expect(call("to_number", str("12345678901234567890123"))).toBe("12345678901234567890123");
    expect(call("to_number", "true")).toBe("1");
    expect(call("to_number", "false")).toBe("0");
    expect(call("to_number", "null")).toBe("0");
    expect(call("to_number", "100.1")).toBe("100.1");
    for (const bad of ["", "broken", "inf", "-Infinity", "NaN", "1e400", "0x10", "1_000", "1e", "."]) {
      expect(call("to_number", str(bad)), bad).toBeUndefined();
    }
    expect(call("to_number", "[1]")).toBeUndefined();
  });
});

describe("encoding", () => {
  it("marshals JSON like Go's json.Marshal", () => {
    expect(call("json.marshal", '{"b": [1, {2, 1}], "a": 1.5, "c": null}')).toBe(
      str('{"a":1.5,"b":[1,[1,2]],"c":null}'),
    );
    expect(call("json.marshal", str("<a&b>"))).toBe(str('"\\u003ca\\u0026b\\u003e"'));
    expect(call("json.marshal", str("line\u2028sep"))).toBe(str('"line\\u2028sep"'));
    expect(call("json.marshal", str('q"\n'))).toBe(str('"q\\"\\n"'));
  });

  it("unmarshals JSON, undefined when invalid", () => {
    expect(call("json.unmarshal", str('{"a": [1, 2.5, "x"]}'))).toBe('{"a":[1,2.5,"x"]}');
    expect(call("json.unmarshal", str("{bad"))).toBeUndefined();
    expect(call("json.unmarshal", str("1 2"))).toBeUndefined();
    expect(call("json.unmarshal", "1")).toBeUndefined();
  });

  it("encodes and decodes base64 and base64url", () => {
    for (const text of ["", "a", "ab", "abc", "hello", "ÿþ?>"]) {
      const std = Buffer.from(text).toString("base64");
      const url = Buffer.from(text).toString("base64url");
      const urlPadded = url + "=".repeat((4 - (url.length % 4)) % 4);
      expect(call("base64.encode", str(text))).toBe(str(std));
      expect(call("base64url.encode", str(text))).toBe(str(urlPadded));
      expect(call("base64url.encode_no_pad", str(text))).toBe(str(url));
      expect(call("base64.decode", str(std))).toBe(str(text));
      expect(call("base64url.decode", str(url))).toBe(str(text));
      expect(call("base64url.decode", str(urlPadded))).toBe(str(text));
    }
    expect(call("base64.decode", str("aGVs\r\nbG8="))).toBe(str("hello"));
    for (const bad of ["aGVsbG8", "YQ===", "Y===", "YQ=a", "a", "YQ==YQ==", "aGVs*G8="]) {
      expect(call("base64.decode", str(bad)), bad).toBeUndefined();
    }
    expect(call("base64url.decode", str("a"))).toBeUndefined();
    expect(call("base64.encode", "1")).toBeUndefined();
  });

  it("decodes to arbitrary bytes", () => {
    const decoded = rt.call(
      "writ_builtin_base64_decode",
      rt.v(str("2E84ZuPUd7zfvCZSNEchVpDEIj6PL7JfLpIqyxVG16k=")),
    );
    expect(rt.call("writ_length", decoded)).toBe(32);
    expect(rt.value(rt.call("writ_builtin_count", decoded))).toBe("30");
  });
});

describe("allocation", () => {
  it("returns arguments unchanged without allocating", () => {
    const s = rt.v(str("abc"));
    const empty = rt.v(str(""));
    const x = rt.v(str("x"));
    const before = rt.heap();
    expect(rt.call("writ_builtin_lower", s)).toBe(s);
    expect(rt.call("writ_builtin_trim_space", s)).toBe(s);
    expect(rt.call("writ_builtin_trim", s, empty)).toBe(s);
    expect(rt.call("writ_builtin_trim_prefix", s, x)).toBe(s);
    expect(rt.call("writ_builtin_replace", s, x, empty)).toBe(s);
    expect(rt.heap()).toBe(before);
  });

  it("keeps arithmetic to the result's own allocation", () => {
    const a = rt.v("40");
    const b = rt.v("2");
    const c = rt.v("1.5");
    const d = rt.v("2.25");
    let before = rt.heap();
    rt.call("writ_builtin_plus", a, b);
    expect(rt.heap() - before).toBe(16);
    before = rt.heap();
    rt.call("writ_builtin_plus", c, c);
    expect(rt.heap() - before).toBe(16);
    before = rt.heap();
    expect(rt.value(rt.call("writ_builtin_plus", c, d))).toBe("3.75");
    expect(rt.heap() - before).toBeLessThanOrEqual(96);
  });
});
