import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BigFloat,
  bigFloatAdd,
  bigFloatMul,
  bigFloatQuo,
  bigFloatTrunc,
  canonicalKey,
  compareStrings,
  compareValues,
  FALSE,
  formatFloat,
  formatValue,
  fromJSON,
  goQuote,
  JSONSyntaxError,
  lookup,
  makeArray,
  makeObject,
  makeSet,
  makeString,
  NULL,
  numberFromBigFloat,
  numberFromBigInt,
  numberFromFloat,
  numberFromText,
  parseJSON,
  TRUE,
  toBigFloat,
  toJSON,
  toJSONText,
  type Value,
  valueEquals,
} from "../../../src/rego/plan/value.ts";

const n = numberFromText;
const s = makeString;

describe("numbers", () => {
  it("keep the exact value of integers of any size", () => {
    const big = n("18446744073709551617");
    expect(big.int).toBe(18446744073709551617n);
    expect(big.text).toBe("18446744073709551617");
    expect(compareValues(big, n("18446744073709551616"))).toBe(1);
  });

  it("treat integral decimals as integers but keep their text", () => {
    expect(n("1.0").int).toBe(1n);
    expect(n("1.0").text).toBe("1.0");
    expect(n("1e3").int).toBe(1000n);
    expect(n("1.5").int).toBeUndefined();
    expect(n("-0").int).toBe(0n);
  });

  it("compare by exact decimal value (1 == 1.0 == 1e0, not 1 == 1.0000000000000000001)", () => {
    expect(valueEquals(n("1"), n("1.0"))).toBe(true);
    expect(valueEquals(n("1"), n("1e0"))).toBe(true);
    expect(valueEquals(n("100"), n("1e2"))).toBe(true);
    expect(valueEquals(n("0.1"), n("1e-1"))).toBe(true);
    expect(valueEquals(n("1"), n("1.0000000000000000001"))).toBe(false);
    expect(compareValues(n("1"), n("1.0000000000000000001"))).toBe(-1);
    expect(compareValues(n("1e400"), n("1e401"))).toBe(-1);
    expect(compareValues(n("-1e400"), n("1"))).toBe(-1);
    expect(compareValues(n("-2.5"), n("-2.25"))).toBe(-1);
    expect(compareValues(n("0"), n("-0.0"))).toBe(0);
  });

  it("hash equal numbers alike", () => {
    expect(canonicalKey(n("1.0"))).toBe(canonicalKey(n("1")));
    expect(canonicalKey(n("1e2"))).toBe(canonicalKey(numberFromBigInt(100n)));
    expect(canonicalKey(n("0.50"))).toBe(canonicalKey(numberFromFloat(0.5)));
    expect(canonicalKey(n("10"))).not.toBe(canonicalKey(n("1")));
  });

  it("give computed non-integers Go's shortest %g text, integral results an integer text", () => {
    expect(numberFromFloat(0.5).text).toBe("0.5");
    expect(numberFromFloat(1e-7).text).toBe("1e-07");
    expect(numberFromFloat(1234567.5).text).toBe("1.2345675e+06");
    expect(numberFromFloat(4).text).toBe("4");
    expect(numberFromFloat(4).int).toBe(4n);
  });

  it("format floats as Go's strconv.FormatFloat", () => {
    expect(formatFloat(2.675, "f", 2)).toBe("2.67");
    expect(formatFloat(2.5, "f", 0)).toBe("2");
    expect(formatFloat(3.5, "f", 0)).toBe("4");
    expect(formatFloat(1.125, "f", 2)).toBe("1.12");
    expect(formatFloat(123456.789, "e", 6)).toBe("1.234568e+05");
    expect(formatFloat(1e21, "g", -1)).toBe("1e+21");
    expect(formatFloat(100000, "g", -1)).toBe("100000");
    expect(formatFloat(0.0001, "g", -1)).toBe("0.0001");
    expect(formatFloat(0.00001, "g", -1)).toBe("1e-05");
    expect(formatFloat(1.0, "g", 3)).toBe("1");
    expect(formatFloat(0, "e", 2)).toBe("0.00e+00");
    expect(formatFloat(-0.5, "f", 1)).toBe("-0.5");
  });
});

describe("order", () => {
  it("orders types null < boolean < number < string < array < object < set", () => {
    const ordered: Value[] = [
      NULL,
      FALSE,
      TRUE,
      n("-1"),
      n("2.5"),
      s(""),
      s("a"),
      makeArray([]),
      makeObject(),
      makeSet(),
    ];
    for (let i = 0; i + 1 < ordered.length; i++) expect(compareValues(ordered[i]!, ordered[i + 1]!)).toBe(-1);
    const shuffled = [...ordered].reverse().sort(compareValues);
    expect(shuffled).toEqual(ordered);
  });

  it("orders strings by code point, as Go compares UTF-8 bytes", () => {
    expect(compareStrings("a", "b")).toBe(-1);
    expect(compareStrings("ab", "a")).toBe(1);
    // U+FF61 sorts before U+1F600 by code point, though not by UTF-16 code unit.
    expect(compareStrings("\uff61", "\u{1f600}")).toBe(-1);
    expect(compareStrings("\u{1f600}", "\uff61")).toBe(1);
  });

  it("orders arrays element-wise, shorter first on a tie", () => {
    expect(compareValues(fromJSON([1, 2]), fromJSON([1, 3]))).toBe(-1);
    expect(compareValues(fromJSON([1, 2]), fromJSON([1]))).toBe(1);
    expect(compareValues(fromJSON([2]), fromJSON([1, 5]))).toBe(1);
  });

  it("orders objects by sorted keys, then values, then size", () => {
    expect(compareValues(fromJSON({ a: 1 }), fromJSON({ b: 0 }))).toBe(-1);
    expect(compareValues(fromJSON({ a: 1 }), fromJSON({ a: 2 }))).toBe(-1);
    expect(compareValues(fromJSON({ a: 1, b: 1 }), fromJSON({ a: 1 }))).toBe(1);
    expect(compareValues(fromJSON({ b: 1, a: 1 }), fromJSON({ a: 1, b: 1 }))).toBe(0);
  });

  it("orders sets by their sorted elements", () => {
    expect(compareValues(makeSet([n("2"), n("1")]), makeSet([n("1"), n("3")]))).toBe(-1);
    expect(compareValues(makeSet([n("1")]), makeSet([n("1"), n("2")]))).toBe(-1);
  });
});

describe("collections", () => {
  it("have keys of any type, equal keys being the same key", () => {
    const obj = makeObject([
      [n("1"), s("one")],
      [fromJSON([1, "a"]), s("array")],
      [makeSet([s("x")]), s("set")],
    ]);
    expect(lookup(obj, n("1.0"))).toEqual(s("one"));
    expect(lookup(obj, fromJSON([1, "a"]))).toEqual(s("array"));
    expect(lookup(obj, makeSet([s("x")]))).toEqual(s("set"));
    obj.set(n("1e0"), s("uno"));
    expect(obj.size).toBe(3);
    expect(lookup(obj, n("1"))).toEqual(s("uno"));
  });

  it("iterate in OPA's order", () => {
    const set = makeSet([s("b"), n("3"), s("a"), NULL]);
    expect(set.elements()).toEqual([NULL, n("3"), s("a"), s("b")]);
    const obj = fromJSON({ z: 1, a: 2, m: 3 });
    expect(obj.type === "object" && obj.keys()).toEqual([s("a"), s("m"), s("z")]);
  });

  it("are equal regardless of insertion order", () => {
    expect(valueEquals(makeSet([n("1"), n("2")]), makeSet([n("2"), n("1.0")]))).toBe(true);
    expect(valueEquals(fromJSON({ a: [1, { b: 2 }] }), fromJSON({ a: [1, { b: 2.0 }] }))).toBe(true);
    expect(valueEquals(fromJSON({ a: 1 }), fromJSON({ a: 1, b: 2 }))).toBe(false);
  });

  it("look up array elements by integer index only", () => {
    const arr = fromJSON(["a", "b"]);
    expect(lookup(arr, n("1"))).toEqual(s("b"));
    expect(lookup(arr, n("2"))).toBeUndefined();
    expect(lookup(arr, n("-1"))).toBeUndefined();
    expect(lookup(arr, s("0"))).toBeUndefined();
    expect(lookup(makeSet([s("x")]), s("x"))).toEqual(s("x"));
    expect(lookup(s("abc"), n("0"))).toBeUndefined();
  });
});

describe("JSON", () => {
  it("converts from JavaScript data", () => {
    const v = fromJSON({ a: [1, 2.5, null, true, "x"], big: 12345678901234567890n, s: new Set([1]) });
    expect(formatValue(v)).toBe('{"a": [1, 2.5, null, true, "x"], "big": 12345678901234567890, "s": {1}}');
  });

  it("serializes sets as sorted arrays and stringifies non-string keys like OPA", () => {
    const obj = makeObject([
      [n("1"), s("one")],
      [fromJSON([1, "a"]), TRUE],
      [s("k"), makeSet([n("3"), n("1"), n("2")])],
    ]);
    expect(toJSON(obj)).toEqual({ "1": "one", '[1,"a"]': true, k: [1, 2, 3] });
    expect(toJSONText(obj)).toBe('{"1":"one","[1,\\"a\\"]":true,"k":[1,2,3]}');
  });

  it("keeps the text of numbers and sorts keys when writing JSON text", () => {
    const v = parseJSON('{"b": [1.0, 2.50, 1e400], "a": "<&>", "c": 18446744073709551617}');
    expect(toJSONText(v)).toBe('{"a":"\\u003c\\u0026\\u003e","b":[1.0,2.50,1e400],"c":18446744073709551617}');
    expect(toJSONText(v, { escapeHTML: false })).toContain('"a":"<&>"');
  });

  it("parses JSON strictly, the last duplicate key winning", () => {
    expect(formatValue(parseJSON('{"a": 1, "a": 2}'))).toBe('{"a": 2}');
    expect(formatValue(parseJSON('"\\u00e9\\n"'))).toBe('"é\\n"');
    for (const bad of ["", "{", "[1,]", "01", "1.", "'a'", "[1] 2", '{"a" 1}', "nul", '"\t"']) {
      expect(() => parseJSON(bad), bad).toThrow(JSONSyntaxError);
    }
  });
});

describe("Rego text", () => {
  it("prints values as OPA's String() does", () => {
    expect(formatValue(fromJSON(["there", 5, 3.14]))).toBe('["there", 5, 3.14]');
    expect(formatValue(makeSet())).toBe("set()");
    expect(formatValue(makeSet([s("b"), s("a")]))).toBe('{"a", "b"}');
    expect(formatValue(fromJSON({}))).toBe("{}");
    expect(formatValue(n("1.0"))).toBe("1.0");
  });

  it("quotes strings as Go's strconv.Quote", () => {
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote("tab\there\u0007\u007f")).toBe('"tab\\there\\a\\x7f"');
    expect(goQuote("héllo 😀")).toBe('"héllo 😀"');
    expect(goQuote("héllo", true)).toBe('"h\\u00e9llo"');
    expect(goQuote("\u00a0\u{e0001}")).toBe('"\\u00a0\\U000e0001"');
  });
});

describe("properties", () => {
  const numberText = fc.oneof(
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc
      .tuple(fc.integer({ min: -999, max: 999 }), fc.nat({ max: 9999 }), fc.integer({ min: -25, max: 25 }))
      .map(([i, f, e]) => `${i}.${f}e${e}`),
    fc.constantFrom("0", "-0", "1.0", "1e2", "100", "0.1", "1e-1", "10.00"),
  );
  const { value } = fc.letrec<{ value: Value }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constant<Value>(NULL),
      fc.boolean().map((b): Value => (b ? TRUE : FALSE)),
      numberText.map((t): Value => n(t)),
      fc.string({ unit: "binary", maxLength: 4 }).map((x): Value => s(x)),
      fc.array(tie("value"), { maxLength: 3 }).map((xs): Value => makeArray(xs)),
      fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((es): Value => makeObject(es)),
      fc.array(tie("value"), { maxLength: 3 }).map((xs): Value => makeSet(xs)),
    ),
  }));

  it("compare is a total order consistent with equality and canonical keys", () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        const ab = compareValues(a, b);
        expect(compareValues(a, a)).toBe(0);
        expect(Math.sign(compareValues(b, a)) === -Math.sign(ab)).toBe(true);
        expect(valueEquals(a, b)).toBe(ab === 0);
        expect(canonicalKey(a) === canonicalKey(b)).toBe(ab === 0);
      }),
      { numRuns: 500 },
    );
  });

  it("compare is transitive", () => {
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        const [x, y, z] = [a, b, c].sort(compareValues) as [Value, Value, Value];
        expect(compareValues(x, z)).toBeLessThanOrEqual(0);
        if (compareValues(x, y) < 0 || compareValues(y, z) < 0) expect(compareValues(x, z)).toBe(-1);
      }),
      { numRuns: 300 },
    );
  });

  it("JSON text reads back to an equal value (sets as sorted arrays, keys as text)", () => {
    fc.assert(
      fc.property(value, (v) => {
        const text = toJSONText(v);
        const back = parseJSON(text);
        expect(toJSONText(back)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it("numbers equal exactly when their decimal values are equal", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat({ max: 5 }), (i, zeros) => {
        const scaled = `${i}${"0".repeat(zeros)}e-${zeros}`;
        expect(valueEquals(n(String(i)), n(scaled))).toBe(true);
        expect(canonicalKey(n(String(i)))).toBe(canonicalKey(n(scaled)));
      }),
    );
  });
});

describe("big float arithmetic", () => {
  // Normal doubles only: big.Float has no subnormals, so tiny values keep all their bits.
  const normal = (x: number) => Math.abs(x) >= 2.2250738585072014e-308;
  const finite = fc
    .double({ noNaN: true, noDefaultInfinity: true, min: -1e200, max: 1e200 })
    .filter((x) => x === 0 || normal(x));
  const text = (x: number) => formatFloat(x, "g", -1);

  it("agrees with IEEE doubles at 53 bits (add, mul, quo, and the shortest text)", () => {
    fc.assert(
      fc.property(finite, finite, (a, b) => {
        const x = toBigFloat(n(text(a)), 53);
        const y = toBigFloat(n(text(b)), 53);
        const cases: Array<[BigFloat, number]> = [
          [bigFloatAdd(x, y), a + b],
          [bigFloatMul(x, y), a * b],
        ];
        if (b !== 0) cases.push([bigFloatQuo(x, y), a / b]);
        for (const [got, want] of cases) {
          if (!Number.isFinite(want) || !normal(want)) continue;
          const value = numberFromBigFloat(got);
          expect(value.float).toBe(want);
          if (!Number.isInteger(want)) expect(value.text).toBe(text(want));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("rounds at OPA's 64 bits", () => {
    const sum = bigFloatAdd(toBigFloat(n("0.1")), toBigFloat(n("0.2")));
    expect(numberFromBigFloat(sum).text).toBe("0.3");
    const third = bigFloatQuo(toBigFloat(n("1")), toBigFloat(n("3")));
    expect(numberFromBigFloat(third).text).toBe("0.33333333333333333334");
    expect(bigFloatTrunc(toBigFloat(n("-2.7")))).toBe(-2n);
    expect(numberFromBigFloat(bigFloatMul(toBigFloat(n("1.5")), toBigFloat(n("1e30")))).text).toBe(
      "1500000000000000000000000000000",
    );
  });
});
