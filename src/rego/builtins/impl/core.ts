/**
 * The core builtins in JavaScript (comparison, arithmetic, aggregates, sets, arrays, objects,
 * strings, sprintf, types, encodings, and a few others), following OPA's `topdown` semantics
 * (checked against `v1/topdown/*.go`). Most are also native in the runtime module; these serve
 * the plan interpreter, host calls and strict builtin errors.
 */
import {
  type ArrayValue,
  asPlainInt,
  type BigFloat,
  bigFloatAdd,
  bigFloatFromBigInt,
  bigFloatIsInt,
  bigFloatMul,
  bigFloatNeg,
  bigFloatQuo,
  bigFloatTrunc,
  codePointLength,
  compareValues,
  formatFloat,
  formatValue,
  goQuote,
  isGoPrintable,
  isNumberText,
  isPlainIntegerText,
  JSONSyntaxError,
  lookup,
  makeArray,
  makeBoolean,
  makeObject,
  makeSet,
  type NumberValue,
  numberFromBigFloat,
  numberFromBigInt,
  numberFromText,
  type ObjectValue,
  parseJSON,
  quoteRune,
  type SetValue,
  toBigFloat,
  toJSONText,
  type Value,
  valueEquals,
} from "../../plan/value.ts";
import {
  arg,
  arrayArg,
  BuiltinError,
  bigIntArg,
  define,
  elementError,
  fail,
  int,
  intArg,
  numberArg,
  objectArg,
  setArg,
  str,
  stringArg,
  stringOrStrings,
  stringsOf,
  typeError,
  typeName,
} from "../registry.ts";

// ------------------------------------------------------------------------------------ comparison

define("eq", (args) => makeBoolean(valueEquals(arg(args, 0), arg(args, 1))));
define("assign", (args) => makeBoolean(valueEquals(arg(args, 0), arg(args, 1))));
define("equal", (args) => makeBoolean(valueEquals(arg(args, 0), arg(args, 1))));
define("neq", (args) => makeBoolean(!valueEquals(arg(args, 0), arg(args, 1))));
define("lt", (args) => makeBoolean(compareValues(arg(args, 0), arg(args, 1)) < 0));
define("lte", (args) => makeBoolean(compareValues(arg(args, 0), arg(args, 1)) <= 0));
define("gt", (args) => makeBoolean(compareValues(arg(args, 0), arg(args, 1)) > 0));
define("gte", (args) => makeBoolean(compareValues(arg(args, 0), arg(args, 1)) >= 0));

function member(x: Value, coll: Value): boolean {
  switch (coll.type) {
    case "set":
      return coll.has(x);
    case "array":
      return coll.items.some((v) => valueEquals(v, x));
    case "object":
      return coll.entries().some(([, v]) => valueEquals(v, x));
    default:
      return false;
  }
}

function memberWithKey(key: Value, value: Value, coll: Value): boolean {
  if (coll.type === "set") return coll.has(key) && valueEquals(key, value);
  if (coll.type !== "object" && coll.type !== "array") return false;
  const found = lookup(coll, key);
  return found !== undefined && valueEquals(found, value);
}

define("internal.member_2", (args) => makeBoolean(member(arg(args, 0), arg(args, 1))));
define("internal.member_3", (args) => makeBoolean(memberWithKey(arg(args, 0), arg(args, 1), arg(args, 2))));

// ------------------------------------------------------------------------------------ arithmetic

/*
 * OPA's arithmetic (`topdown/arithmetic.go`): integers are exact; anything else is computed on
 * `big.Float`s of 64-bit mantissa and written back as the shortest decimal text (see `BigFloat`
 * in value.ts). Division, `abs`, `round`, `ceil` and `floor` are exact only for integers in the
 * int32 window, as OPA's "small int" fast path; other operands take the float path.
 */

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;

/** OPA's `smallInt`: a plain integer in the int32 window. */
function smallInt(n: NumberValue): bigint | undefined {
  const i = asPlainInt(n);
  return i !== undefined && i >= INT32_MIN && i <= INT32_MAX ? i : undefined;
}

function floatResult(compute: () => BigFloat): NumberValue {
  try {
    return numberFromBigFloat(compute());
  } catch (e) {
    if (e instanceof RangeError) fail(e.message);
    throw e;
  }
}

function arith(
  args: readonly Value[],
  onInts: (x: bigint, y: bigint) => bigint,
  onFloats: (x: BigFloat, y: BigFloat) => BigFloat,
): NumberValue {
  const a = numberArg(args, 0);
  const b = numberArg(args, 1);
  if (a.int !== undefined && b.int !== undefined) return numberFromBigInt(onInts(a.int, b.int));
  return floatResult(() => onFloats(toBigFloat(a), toBigFloat(b)));
}

function isZero(n: NumberValue): boolean {
  return n.int === 0n;
}

function divide(args: readonly Value[]): NumberValue {
  const a = numberArg(args, 0);
  const b = numberArg(args, 1);
  if (isZero(b)) fail("divide by zero");
  const x = smallInt(a);
  const y = smallInt(b);
  if (x !== undefined && y !== undefined && x !== 0n && x % y === 0n) return numberFromBigInt(x / y);
  return floatResult(() => bigFloatQuo(toBigFloat(a), toBigFloat(b)));
}

function remainder(args: readonly Value[]): NumberValue {
  const a = numberArg(args, 0);
  const b = numberArg(args, 1);
  if (a.int === undefined || b.int === undefined) fail("modulo on floating-point number");
  if (b.int === 0n) fail("modulo by zero");
  return numberFromBigInt(a.int % b.int);
}

function minus(args: readonly Value[]): Value {
  const a = arg(args, 0);
  const b = arg(args, 1);
  if (a.type === "number" && b.type === "number") {
    return arith(
      args,
      (x, y) => x - y,
      (x, y) => bigFloatAdd(x, bigFloatNeg(y)),
    );
  }
  if (a.type === "set" && b.type === "set") return makeSet(a.elements().filter((x) => !b.has(x)));
  if (a.type !== "number" && a.type !== "set") return typeError(1, a, "number", "set");
  return a.type === "set" ? typeError(2, b, "set") : typeError(2, b, "number");
}

/** A unary operation: the identity-like `onSmall` for small ints, `onFloat` on the float otherwise. */
function unary(
  args: readonly Value[],
  onSmall: (x: bigint) => bigint,
  onFloat: (x: BigFloat) => BigFloat,
): NumberValue {
  const n = numberArg(args, 0);
  const small = smallInt(n);
  if (small !== undefined) return numberFromBigInt(onSmall(small));
  return floatResult(() => onFloat(toBigFloat(n)));
}

const HALF: BigFloat = bigFloatQuo(bigFloatFromBigInt(1n), bigFloatFromBigInt(2n));
const ONE: BigFloat = bigFloatFromBigInt(1n);

/** Half away from zero: `trunc(x ± 0.5)`, the sum rounded to 64 bits first as OPA's is. */
function roundFloat(x: BigFloat): BigFloat {
  const shifted = bigFloatAdd(x, x.neg ? bigFloatNeg(HALF) : HALF);
  return bigFloatFromBigInt(bigFloatTrunc(shifted));
}

/**
 * OPA's `arithCeil`/`arithFloor`: the truncated value, moved by one unless it equals `x` or has the
 * sign bit set (ceil) / not set (floor). Truncation makes -0.5 into +0, so OPA's ceil(-0.5) is 1
 * and floor(-0.5) is 0; this keeps that.
 */
function ceilFloat(x: BigFloat): BigFloat {
  const t = bigFloatTrunc(x);
  const f = bigFloatFromBigInt(t);
  return t < 0n || bigFloatIsInt(x) ? f : bigFloatAdd(f, ONE);
}

function floorFloat(x: BigFloat): BigFloat {
  const t = bigFloatTrunc(x);
  const f = bigFloatFromBigInt(t);
  return t >= 0n || bigFloatIsInt(x) ? f : bigFloatAdd(f, bigFloatNeg(ONE));
}

define("plus", (args) =>
  arith(
    args,
    (x, y) => x + y,
    (x, y) => bigFloatAdd(x, y),
  ),
);
define("minus", minus);
define("mul", (args) =>
  arith(
    args,
    (x, y) => x * y,
    (x, y) => bigFloatMul(x, y),
  ),
);
define("div", divide);
define("rem", remainder);
define("abs", (args) =>
  unary(
    args,
    (x) => (x < 0n ? -x : x),
    (x) => ({ ...x, neg: false }),
  ),
);
define("round", (args) => unary(args, (x) => x, roundFloat));
define("ceil", (args) => unary(args, (x) => x, ceilFloat));
define("floor", (args) => unary(args, (x) => x, floorFloat));

function range(from: bigint, to: bigint, step: bigint): ArrayValue {
  const items: Value[] = [];
  if (from <= to) for (let i = from; i <= to; i += step) items.push(numberFromBigInt(i));
  else for (let i = from; i >= to; i -= step) items.push(numberFromBigInt(i));
  return makeArray(items);
}

define("numbers.range", (args) => range(bigIntArg(args, 0), bigIntArg(args, 1), 1n));
define("numbers.range_step", (args) => {
  const from = bigIntArg(args, 0);
  const to = bigIntArg(args, 1);
  const step = bigIntArg(args, 2);
  if (step <= 0n) fail("numbers.range_step: step must be a positive integer");
  return range(from, to, step);
});

// ------------------------------------------------------------------------------------ aggregates

function collectionItems(v: Value, pos: number): readonly Value[] {
  if (v.type === "array") return v.items;
  if (v.type === "set") return v.elements();
  return typeError(pos, v, "set", "array");
}

function numbersOf(v: Value): NumberValue[] {
  return collectionItems(v, 1).map((x) => (x.type === "number" ? x : elementError(1, v, x, "number")));
}

/**
 * `sum`/`product`: exact when every element is an integer, else on floats (the sum at 64 bits;
 * the product at 53, the precision of the `big.NewFloat(1)` OPA multiplies into).
 */
function accumulate(
  args: readonly Value[],
  init: bigint,
  onInts: (x: bigint, y: bigint) => bigint,
  onFloats: (x: BigFloat, y: BigFloat) => BigFloat,
  prec: number,
): NumberValue {
  const numbers = numbersOf(arg(args, 0));
  if (numbers.every((n) => n.int !== undefined)) {
    return numberFromBigInt(numbers.reduce((acc, n) => onInts(acc, n.int!), init));
  }
  return floatResult(() =>
    numbers.reduce((acc, n) => onFloats(acc, toBigFloat(n)), bigFloatFromBigInt(init, prec)),
  );
}

function count(args: readonly Value[]): NumberValue {
  const v = arg(args, 0);
  switch (v.type) {
    case "array":
      return int(v.items.length);
    case "object":
    case "set":
      return int(v.size);
    case "string":
      return int(codePointLength(v.value));
    default:
      return typeError(1, v, "array", "object", "set", "string");
  }
}

/** `max`/`min` over an array keep the last of equal elements, as OPA's loops do. */
function extreme(args: readonly Value[], better: (c: number) => boolean): Value | undefined {
  const items = collectionItems(arg(args, 0), 1);
  let best: Value | undefined;
  for (const x of items) if (best === undefined || better(compareValues(x, best))) best = x;
  return best;
}

function sorted(args: readonly Value[]): ArrayValue {
  const v = arg(args, 0);
  if (v.type === "set") return makeArray([...v.elements()]);
  if (v.type === "array") return makeArray([...v.items].sort(compareValues));
  return typeError(1, v, "set", "array");
}

define("count", count);
define("sum", (args) =>
  accumulate(
    args,
    0n,
    (x, y) => x + y,
    (x, y) => bigFloatAdd(x, y),
    0,
  ),
);
define("product", (args) =>
  accumulate(
    args,
    1n,
    (x, y) => x * y,
    (x, y) => bigFloatMul(x, y, 53),
    53,
  ),
);
define("max", (args) => extreme(args, (c) => c >= 0));
define("min", (args) => extreme(args, (c) => c <= 0));
define("sort", sorted);

// ------------------------------------------------------------------------------------ sets

function setsOf(v: SetValue): SetValue[] {
  return v.elements().map((x) => (x.type === "set" ? x : typeError(1, x, "set")));
}

function intersect(a: SetValue, b: SetValue): SetValue {
  return makeSet(a.elements().filter((x) => b.has(x)));
}

define("and", (args) => intersect(setArg(args, 0), setArg(args, 1)));
define("or", (args) => makeSet([...setArg(args, 0).elements(), ...setArg(args, 1).elements()]));
define("intersection", (args) => {
  const sets = setsOf(setArg(args, 0));
  return sets.length === 0 ? makeSet() : sets.reduce(intersect);
});
define("union", (args) => makeSet(setsOf(setArg(args, 0)).flatMap((s) => [...s.elements()])));

// ------------------------------------------------------------------------------------ arrays

define("array.concat", (args) => makeArray([...arrayArg(args, 0).items, ...arrayArg(args, 1).items]));
define("array.reverse", (args) => makeArray([...arrayArg(args, 0).items].reverse()));
define("array.flatten", (args) =>
  makeArray(arrayArg(args, 0).items.flatMap((x) => (x.type === "array" ? x.items : [x]))),
);
define("array.slice", (args) => {
  const items = arrayArg(args, 0).items;
  let start = intArg(args, 1);
  let stop = intArg(args, 2);
  stop = Math.min(Math.max(stop, 0), items.length);
  start = Math.min(Math.max(start, 0), stop);
  return makeArray(items.slice(start, stop));
});

// ------------------------------------------------------------------------------------ objects

/** OPA's `Value.Find`: follows a path through objects, arrays (integer indices) and sets. */
function findPath(v: Value, path: readonly Value[]): Value | undefined {
  let cur: Value | undefined = v;
  for (const key of path) {
    if (!cur || (cur.type !== "object" && cur.type !== "array" && cur.type !== "set")) return undefined;
    cur = lookup(cur, key);
  }
  return cur;
}

function objectGet(args: readonly Value[]): Value {
  const obj = objectArg(args, 0);
  const key = arg(args, 1);
  const fallback = arg(args, 2);
  if (key.type !== "array") return obj.get(key) ?? fallback;
  if (key.items.length === 0) return obj;
  return findPath(obj, key.items) ?? fallback;
}

/** Deep merge where `b` wins, merging values that are objects on both sides (`object.union`). */
function mergeWithOverwrite(a: ObjectValue, b: ObjectValue): ObjectValue {
  const out = a.copy();
  for (const [k, v] of b.entries()) {
    const old = out.get(k);
    out.set(k, old?.type === "object" && v.type === "object" ? mergeWithOverwrite(old, v) : v);
  }
  return out;
}

/** The keys named by an array, set or object (`object.remove`, `object.filter`). */
function keysParam(v: Value): SetValue {
  if (v.type === "array") return makeSet(v.items);
  if (v.type === "set") return v;
  if (v.type === "object") return makeSet(v.keys());
  return typeError(2, v, "object", "set", "array");
}

function objectSubset(sup: ObjectValue, sub: ObjectValue): boolean {
  return sub.entries().every(([k, subValue]) => {
    const supValue = sup.get(k);
    if (supValue === undefined) return false;
    if (valueEquals(subValue, supValue)) return true;
    return nestedSubset(supValue, subValue);
  });
}

function nestedSubset(sup: Value, sub: Value): boolean {
  if (sup.type === "object" && sub.type === "object") return objectSubset(sup, sub);
  if (sup.type === "set" && sub.type === "set") return sub.elements().every((x) => sup.has(x));
  if (sup.type === "array" && sub.type === "array") return arraySubset(sup.items, sub.items);
  return false;
}

/** Whether `sub` appears as a contiguous run in `sup` (OPA's `arraySubset`). */
function arraySubset(sup: readonly Value[], sub: readonly Value[]): boolean {
  if (sub.length > sup.length) return false;
  for (let start = 0; start + sub.length <= sup.length; start++) {
    if (sub.every((x, i) => compareValues(sup[start + i]!, x) === 0)) return true;
  }
  return false;
}

/** OPA's `arraySetSubset` (note: false for an empty array, even with an empty set). */
function arraySetSubset(sup: readonly Value[], sub: SetValue): boolean {
  let unmatched = sub.size;
  for (const x of sup) {
    if (sub.has(x)) unmatched--;
    if (unmatched === 0) return true;
  }
  return false;
}

function subset(args: readonly Value[]): Value {
  const sup = arg(args, 0);
  const sub = arg(args, 1);
  if (sup.type === "array" && sub.type === "set") return makeBoolean(arraySetSubset(sup.items, sub));
  if (sup.type !== sub.type || (sup.type !== "object" && sup.type !== "set" && sup.type !== "array")) {
    fail("both arguments object.subset must be of the same type or array and set");
  }
  return makeBoolean(nestedSubset(sup, sub));
}

define("object.get", objectGet);
define("object.keys", (args) => makeSet(objectArg(args, 0).keys()));
define("object.union", (args) => mergeWithOverwrite(objectArg(args, 0), objectArg(args, 1)));
define("object.union_n", (args) => {
  const arr = arrayArg(args, 0);
  const objects = arr.items.map((x) => (x.type === "object" ? x : elementError(1, arr, x, "object")));
  return objects.reduce(mergeWithOverwrite, makeObject());
});
define("object.remove", (args) => {
  const obj = objectArg(args, 0);
  const keys = keysParam(arg(args, 1));
  return makeObject(obj.entries().filter(([k]) => !keys.has(k)));
});
define("object.filter", (args) => {
  const obj = objectArg(args, 0);
  const keys = keysParam(arg(args, 1));
  return makeObject(obj.entries().filter(([k]) => keys.has(k)));
});
define("object.subset", subset);

// ------------------------------------------------------------------------------------ strings

function codePoints(s: string): string[] {
  return Array.from(s);
}

/** Go's `unicode.IsSpace`. */
function isGoSpace(ch: string): boolean {
  return /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/.test(ch);
}

/** Per-code-point case mapping like Go's `strings.ToLower`/`ToUpper` (no context, 1:1 only). */
function mapCase(s: string, upper: boolean): string {
  let out = "";
  for (const ch of s) {
    if (!upper && ch === "\u0130") {
      out += "i";
      continue;
    }
    const mapped = upper ? ch.toUpperCase() : ch.toLowerCase();
    out += codePointLength(mapped) === 1 ? mapped : ch;
  }
  return out;
}

function trimWith(s: string, drop: (ch: string) => boolean, left: boolean, right: boolean): string {
  const cps = codePoints(s);
  let start = 0;
  let end = cps.length;
  if (left) while (start < end && drop(cps[start]!)) start++;
  if (right) while (end > start && drop(cps[end - 1]!)) end--;
  return cps.slice(start, end).join("");
}

function cutset(chars: string): (ch: string) => boolean {
  const set = new Set(codePoints(chars));
  return (ch) => set.has(ch);
}

function split(s: string, sep: string): string[] {
  if (sep === "") return codePoints(s);
  return s.split(sep);
}

/**
 * Go's `strings.NewReplacer(old1, new1, …).Replace(s)`: matches are replaced left to right
 * without overlapping, the first pair in argument order winning at a position; an empty `old`
 * matches between code points (Go's generic replacer inserts between bytes).
 */
function replaceAll(s: string, pairs: ReadonlyArray<readonly [string, string]>): string {
  if (pairs.length === 1 && pairs[0]![0] !== "") return s.split(pairs[0]![0]).join(pairs[0]![1]);
  let out = "";
  let i = 0;
  let prevEmpty = false;
  while (i <= s.length) {
    const match = pairs.find(([old]) => !(old === "" && prevEmpty) && s.startsWith(old, i));
    prevEmpty = match !== undefined && match[0] === "";
    if (match) {
      out += match[1];
      i += match[0].length;
      continue;
    }
    if (i === s.length) break;
    const width = s.codePointAt(i)! > 0xffff ? 2 : 1;
    out += s.slice(i, i + width);
    i += width;
  }
  return out;
}

function indexOfCodePoints(base: string[], search: string[], from: number): number {
  for (let i = from; i + search.length <= base.length; i++) {
    if (search.every((c, j) => base[i + j] === c)) return i;
  }
  return -1;
}

function substring(args: readonly Value[]): Value {
  const s = stringArg(args, 0);
  const start = intArg(args, 1);
  const length = intArg(args, 2);
  if (start < 0) fail("negative offset");
  const cps = codePoints(s);
  if (start >= cps.length) return str("");
  return str(cps.slice(start, length < 0 ? undefined : Math.min(cps.length, start + length)).join(""));
}

function indexOf(args: readonly Value[]): Value {
  const base = codePoints(stringArg(args, 0));
  const search = stringArg(args, 1);
  if (search === "") fail("empty search character");
  return int(indexOfCodePoints(base, codePoints(search), 0));
}

function indexOfN(args: readonly Value[]): Value {
  const base = codePoints(stringArg(args, 0));
  const search = stringArg(args, 1);
  if (search === "") fail("empty search character");
  const needle = codePoints(search);
  const found: Value[] = [];
  for (let i = indexOfCodePoints(base, needle, 0); i >= 0; i = indexOfCodePoints(base, needle, i + 1))
    found.push(int(i));
  return makeArray(found);
}

function concat(args: readonly Value[]): Value {
  const sep = stringArg(args, 0);
  const v = arg(args, 1);
  if (v.type !== "array" && v.type !== "set") return typeError(2, v, "set", "array");
  return str(stringsOf(v, 2).join(sep));
}

function formatInt(args: readonly Value[]): Value {
  const n = numberArg(args, 0);
  const base = numberArg(args, 1);
  const radix = { "2": 2, "8": 8, "10": 10, "16": 16 }[base.text];
  if (radix === undefined)
    throw new BuiltinError("eval_type_error", "operand 2 must be one of {2, 8, 10, 16}");
  const plain = radix === 10 ? asPlainInt(n) : undefined;
  if (plain !== undefined) return str(plain.toString());
  // OPA formats the float's integer part (`NumberToFloat(n).Int()`).
  return str(bigFloatTrunc(toBigFloat(n)).toString(radix));
}

function stringsCount(args: readonly Value[]): Value {
  const s = stringArg(args, 0);
  const sub = stringArg(args, 1);
  if (sub === "") return int(codePointLength(s) + 1);
  return int(s.split(sub).length - 1);
}

function replaceN(args: readonly Value[]): Value {
  const patterns = objectArg(args, 0);
  const s = stringArg(args, 1);
  const pairs = patterns.entries().map(([k, v]): [string, string] => {
    if (k.type !== "string") fail("operand 1 non-string key found in pattern object");
    if (v.type !== "string") fail("operand 1 non-string value found in pattern object");
    return [k.value, v.value];
  });
  return str(pairs.length === 0 ? s : replaceAll(s, pairs));
}

function anyMatch(args: readonly Value[], test: (s: string, affix: string) => boolean): Value {
  const strs = stringOrStrings(arg(args, 0), 1);
  const affixes = stringOrStrings(arg(args, 1), 2);
  return makeBoolean(strs.some((s) => affixes.some((a) => test(s, a))));
}

define("concat", concat);
define("contains", (args) => makeBoolean(stringArg(args, 0).includes(stringArg(args, 1))));
define("startswith", (args) => makeBoolean(stringArg(args, 0).startsWith(stringArg(args, 1))));
define("endswith", (args) => makeBoolean(stringArg(args, 0).endsWith(stringArg(args, 1))));
define("lower", (args) => str(mapCase(stringArg(args, 0), false)));
define("upper", (args) => str(mapCase(stringArg(args, 0), true)));
define("split", (args) => makeArray(split(stringArg(args, 0), stringArg(args, 1)).map(str)));
define("strings.split_n", (args) => {
  const parts = split(stringArg(args, 0), stringArg(args, 1));
  const n = intArg(args, 2);
  return makeArray((n >= 0 ? parts.slice(0, n) : parts.slice(Math.max(0, parts.length + n))).map(str));
});
define("replace", (args) => str(replaceAll(stringArg(args, 0), [[stringArg(args, 1), stringArg(args, 2)]])));
define("substring", substring);
define("indexof", indexOf);
define("indexof_n", indexOfN);
define("trim", (args) => str(trimWith(stringArg(args, 0), cutset(stringArg(args, 1)), true, true)));
define("trim_left", (args) => str(trimWith(stringArg(args, 0), cutset(stringArg(args, 1)), true, false)));
define("trim_right", (args) => str(trimWith(stringArg(args, 0), cutset(stringArg(args, 1)), false, true)));
define("trim_space", (args) => str(trimWith(stringArg(args, 0), isGoSpace, true, true)));
define("trim_prefix", (args) => {
  const s = stringArg(args, 0);
  const prefix = stringArg(args, 1);
  return str(s.startsWith(prefix) ? s.slice(prefix.length) : s);
});
define("trim_suffix", (args) => {
  const s = stringArg(args, 0);
  const suffix = stringArg(args, 1);
  return str(s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) : s);
});
define("format_int", formatInt);
define("strings.any_prefix_match", (args) => anyMatch(args, (s, p) => s.startsWith(p)));
define("strings.any_suffix_match", (args) => anyMatch(args, (s, p) => s.endsWith(p)));
define("strings.count", stringsCount);
define("strings.reverse", (args) => str(codePoints(stringArg(args, 0)).reverse().join("")));
define("strings.replace_n", replaceN);
define("sprintf", (args) => {
  const format = stringArg(args, 0);
  return str(goSprintf(format, arrayArg(args, 1).items.map(toGoArg)));
});

// ------------------------------------------------------------------------------------ sprintf (Go's fmt)

/** The Go values OPA hands to `fmt.Sprintf`. */
export type GoArg =
  | { kind: "int"; value: bigint }
  | { kind: "bigint"; value: bigint }
  | { kind: "float"; value: number }
  | { kind: "string"; value: string };

const GO_TYPE_NAMES: Record<GoArg["kind"], string> = {
  int: "int",
  bigint: "*big.Int",
  float: "float64",
  string: "string",
};

function toGoArg(v: Value): GoArg {
  if (v.type === "string") return { kind: "string", value: v.value };
  if (v.type !== "number") return { kind: "string", value: formatValue(v) };
  const plain = asPlainInt(v);
  if (plain !== undefined) return { kind: "int", value: plain };
  if (v.int !== undefined && isPlainIntegerText(v)) return { kind: "bigint", value: v.int };
  if (Number.isFinite(v.float)) return { kind: "float", value: v.float };
  return { kind: "string", value: v.text };
}

interface FmtFlags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  wid: number | undefined;
  prec: number | undefined;
}

function clearFlags(): FmtFlags {
  return {
    plus: false,
    minus: false,
    sharp: false,
    space: false,
    zero: false,
    plusV: false,
    sharpV: false,
    wid: undefined,
    prec: undefined,
  };
}

const MAX_FMT_NUMBER = 1e6;

/** Parses a decimal number at `i` (Go's `parsenum`). */
function parseNum(s: string, i: number, end: number): { num: number | undefined; next: number } {
  let n = 0;
  let j = i;
  while (j < end && s[j]! >= "0" && s[j]! <= "9") {
    if (n > MAX_FMT_NUMBER) return { num: undefined, next: end };
    n = n * 10 + s.charCodeAt(j) - 48;
    j++;
  }
  return { num: j > i ? n : undefined, next: j };
}

/** A port of the parts of Go's `fmt.Sprintf` that OPA's argument types reach. */
class GoPrinter {
  private out = "";
  private f: FmtFlags = clearFlags();
  private argNum = 0;
  private reordered = false;
  private goodArgNum = true;

  constructor(
    private readonly format: string,
    private readonly args: readonly GoArg[],
  ) {}

  run(): string {
    const { format } = this;
    const end = format.length;
    let i = 0;
    while (i < end) {
      this.goodArgNum = true;
      const start = i;
      while (i < end && format[i] !== "%") i++;
      this.out += format.slice(start, i);
      if (i >= end) break;
      i = this.directive(i + 1);
    }
    this.out += this.extra();
    return this.out;
  }

  /** Handles one `%…` directive starting after the `%`; returns the next index. */
  private directive(start: number): number {
    const { format } = this;
    const end = format.length;
    this.f = clearFlags();
    let i = this.flags(start);
    let afterIndex: boolean;
    [i, afterIndex] = this.argIndex(i);
    if (i < end && format[i] === "*") {
      i = this.widthFromArg(i + 1);
      afterIndex = false;
    } else {
      const { num, next } = parseNum(format, i, end);
      this.f.wid = num;
      i = next;
      if (afterIndex && num !== undefined) this.goodArgNum = false;
    }
    if (i + 1 < end && format[i] === ".") {
      if (afterIndex) this.goodArgNum = false;
      [i, afterIndex] = this.argIndex(i + 1);
      if (i < end && format[i] === "*") {
        i = this.precisionFromArg(i + 1);
        afterIndex = false;
      } else {
        const { num, next } = parseNum(format, i, end);
        this.f.prec = num ?? 0;
        i = next;
      }
    }
    if (!afterIndex) [i] = this.argIndex(i);
    if (i >= end) {
      this.out += "%!(NOVERB)";
      return end;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    this.out += this.verb(verb);
    return i + verb.length;
  }

  private flags(start: number): number {
    let i = start;
    for (; i < this.format.length; i++) {
      const c = this.format[i];
      if (c === "#") this.f.sharp = true;
      else if (c === "0") this.f.zero = !this.f.minus;
      else if (c === "+") this.f.plus = true;
      else if (c === "-") Object.assign(this.f, { minus: true, zero: false });
      else if (c === " ") this.f.space = true;
      else break;
    }
    return i;
  }

  private widthFromArg(i: number): number {
    const w = this.intFromArg();
    if (w === undefined) this.out += "%!(BADWIDTH)";
    else if (w < 0) Object.assign(this.f, { wid: -w, minus: true, zero: false });
    else this.f.wid = w;
    return i;
  }

  private precisionFromArg(i: number): number {
    const p = this.intFromArg();
    this.f.prec = p === undefined || p < 0 ? undefined : p;
    if (p === undefined) this.out += "%!(BADPREC)";
    return i;
  }

  /** An explicit argument index `[n]` (Go's `argNumber`); returns the next index and whether one was read. */
  private argIndex(i: number): [number, boolean] {
    const { format } = this;
    if (i >= format.length || format[i] !== "[") return [i, false];
    this.reordered = true;
    const close = format.indexOf("]", i + 1);
    if (format.length - i < 3 || close < 0) {
      this.goodArgNum = false;
      return [i + 1, false];
    }
    const { num, next } = parseNum(format, i + 1, close);
    if (num === undefined || next !== close) {
      this.goodArgNum = false;
      return [close + 1, false];
    }
    if (num >= 1 && num <= this.args.length) this.argNum = num - 1;
    else this.goodArgNum = false;
    return [close + 1, true];
  }

  private intFromArg(): number | undefined {
    const a = this.args[this.argNum];
    if (a === undefined) return undefined;
    this.argNum++;
    const limit = BigInt(MAX_FMT_NUMBER);
    if (a.kind !== "int" || a.value > limit || a.value < -limit) return undefined;
    return Number(a.value);
  }

  private verb(verb: string): string {
    if (verb === "%") return "%";
    if (!this.goodArgNum) return `%!${verb}(BADINDEX)`;
    const a = this.args[this.argNum];
    if (a === undefined) return `%!${verb}(MISSING)`;
    if (verb === "v") {
      Object.assign(this.f, { sharpV: this.f.sharp, sharp: false, plusV: this.f.plus, plus: false });
    }
    this.argNum++;
    return this.printArg(a, verb);
  }

  private extra(): string {
    if (this.reordered || this.argNum >= this.args.length) return "";
    this.f = clearFlags();
    const items = this.args
      .slice(this.argNum)
      .map((a) => `${GO_TYPE_NAMES[a.kind]}=${this.printArg(a, "v")}`);
    return `%!(EXTRA ${items.join(", ")})`;
  }

  private printArg(a: GoArg, verb: string): string {
    if (verb === "T") return this.pad(GO_TYPE_NAMES[a.kind]);
    switch (a.kind) {
      case "int":
        return this.fmtIntegerVerb(a, verb);
      case "bigint":
        return this.fmtBigInt(a.value, verb);
      case "float":
        return this.fmtFloatVerb(a, verb);
      case "string":
        return this.fmtStringVerb(a, verb);
    }
  }

  private badVerb(a: GoArg, verb: string): string {
    return `%!${verb}(${GO_TYPE_NAMES[a.kind]}=${this.printArg(a, "v")})`;
  }

  // -- padding

  private padding(n: number): string {
    if (n <= 0) return "";
    return (this.f.zero && !this.f.minus ? "0" : " ").repeat(n);
  }

  private pad(s: string): string {
    if (this.f.wid === undefined || this.f.wid === 0) return s;
    const width = this.f.wid - codePointLength(s);
    return this.f.minus ? s + this.padding(width) : this.padding(width) + s;
  }

  /** Pads without zero padding (Go turns zero padding into precision for integers). */
  private padSpaces(s: string): string {
    const zero = this.f.zero;
    this.f.zero = false;
    const out = this.pad(s);
    this.f.zero = zero;
    return out;
  }

  // -- integers

  private fmtIntegerVerb(a: GoArg & { kind: "int" }, verb: string): string {
    const base = INTEGER_BASES[verb];
    if (base !== undefined && verb !== "s") return this.fmtInteger(a.value, base, verb);
    if (verb === "c") return this.pad(runeOf(a.value));
    if (verb === "q") return this.pad(`'${quoteRune(runeOf(a.value), "'", this.f.plus)}'`);
    if (verb === "U") return this.fmtUnicode(a.value);
    return this.badVerb(a, verb);
  }

  private fmtInteger(value: bigint, base: number, verb: string): string {
    const negative = value < 0n;
    const f = this.f;
    let digits = (negative ? -value : value).toString(base);
    if (verb === "X") digits = digits.toUpperCase();
    let prec = 0;
    if (f.prec !== undefined) {
      prec = f.prec;
      if (prec === 0 && value === 0n) return " ".repeat(Math.max(0, f.wid ?? 0));
    } else if (f.zero && !f.minus && f.wid !== undefined) {
      prec = f.wid - (negative || f.plus || f.space ? 1 : 0);
    }
    if (digits.length < prec) digits = "0".repeat(prec - digits.length) + digits;
    if (f.sharp) {
      if (base === 2) digits = `0b${digits}`;
      else if (base === 8 && !digits.startsWith("0")) digits = `0${digits}`;
      else if (base === 16) digits = (verb === "X" ? "0X" : "0x") + digits;
    }
    if (verb === "O") digits = `0o${digits}`;
    const sign = negative ? "-" : f.plus ? "+" : f.space ? " " : "";
    return this.padSpaces(sign + digits);
  }

  private fmtUnicode(value: bigint): string {
    const hex = (value < 0n ? -value : value).toString(16).toUpperCase();
    let s = `U+${hex.padStart(Math.max(4, this.f.prec ?? 0), "0")}`;
    if (this.f.sharp && value >= 0n && value <= 0x10ffffn) {
      const ch = String.fromCodePoint(Number(value));
      if (isGoPrintable(ch)) s += ` '${ch}'`;
    }
    return this.padSpaces(s);
  }

  /** `*big.Int`'s `Format` method. */
  private fmtBigInt(value: bigint, verb: string): string {
    const base = INTEGER_BASES[verb];
    if (base === undefined) return `%!${verb}(big.Int=${value})`;
    const f = this.f;
    const sign = value < 0n ? "-" : f.plus || f.plusV ? "+" : f.space ? " " : "";
    let prefix = f.sharp || f.sharpV ? ({ b: "0b", o: "0", x: "0x", X: "0X" }[verb] ?? "") : "";
    if (verb === "O") prefix = "0o";
    let digits = (value < 0n ? -value : value).toString(base);
    if (verb === "X") digits = digits.toUpperCase();
    let zeros = 0;
    if (f.prec !== undefined) {
      if (digits.length < f.prec) zeros = f.prec - digits.length;
      else if (digits === "0" && f.prec === 0) return "";
    }
    const length = sign.length + prefix.length + zeros + digits.length;
    let left = 0;
    let right = 0;
    if (f.wid !== undefined && length < f.wid) {
      const d = f.wid - length;
      if (f.minus) right = d;
      else if (f.zero && f.prec === undefined) zeros = d;
      else left = d;
    }
    return " ".repeat(left) + sign + prefix + "0".repeat(zeros) + digits + " ".repeat(right);
  }

  // -- floats

  private fmtFloatVerb(a: GoArg & { kind: "float" }, verb: string): string {
    if (verb === "v") return this.fmtFloat(a.value, "g", -1);
    if ("gGxXb".includes(verb)) return this.fmtFloat(a.value, verb, -1);
    if ("fFeE".includes(verb)) return this.fmtFloat(a.value, verb === "F" ? "f" : verb, 6);
    return this.badVerb(a, verb);
  }

  private fmtFloat(v: number, verb: string, defaultPrec: number): string {
    const f = this.f;
    const prec = f.prec ?? defaultPrec;
    let num = formatGoFloat(v, verb, prec);
    if (num[0] !== "-" && num[0] !== "+") num = `+${num}`;
    if (f.space && num[0] === "+" && !f.plus) num = ` ${num.slice(1)}`;
    if (f.sharp && verb !== "b") num = sharpFloat(num, verb, prec);
    if (!f.plus && num[0] === "+") return this.pad(num.slice(1));
    if (f.zero && !f.minus && f.wid !== undefined && f.wid > num.length) {
      return num[0] + "0".repeat(f.wid - num.length) + num.slice(1);
    }
    return this.pad(num);
  }

  // -- strings

  private fmtStringVerb(a: GoArg & { kind: "string" }, verb: string): string {
    switch (verb) {
      case "v":
        return this.f.sharpV ? this.fmtQ(a.value) : this.pad(this.truncate(a.value));
      case "s":
        return this.pad(this.truncate(a.value));
      case "x":
      case "X":
        return this.fmtSx(a.value, verb === "X");
      case "q":
        return this.fmtQ(a.value);
      default:
        return this.badVerb(a, verb);
    }
  }

  private truncate(s: string): string {
    return this.f.prec === undefined ? s : codePoints(s).slice(0, this.f.prec).join("");
  }

  private fmtQ(s: string): string {
    const t = this.truncate(s);
    if (this.f.sharp && canBackquote(t)) return this.pad(`\`${t}\``);
    return this.pad(goQuote(t, this.f.plus));
  }

  private fmtSx(s: string, upper: boolean): string {
    const f = this.f;
    let bytes = [...Buffer.from(s, "utf8")];
    if (f.prec !== undefined && f.prec < bytes.length) bytes = bytes.slice(0, f.prec);
    if (bytes.length === 0) return f.wid !== undefined ? this.padding(f.wid) : "";
    const prefix = upper ? "0X" : "0x";
    let width = 2 * bytes.length;
    if (f.space) width = (f.sharp ? width * 2 : width) + bytes.length - 1;
    else if (f.sharp) width += 2;
    const hex = bytes.map((b) => {
      const h = b.toString(16).padStart(2, "0");
      return upper ? h.toUpperCase() : h;
    });
    const body = f.space
      ? hex.map((h) => (f.sharp ? prefix + h : h)).join(" ")
      : (f.sharp ? prefix : "") + hex.join("");
    const pad = f.wid !== undefined && f.wid > width ? this.padding(f.wid - width) : "";
    return f.minus ? body + pad : pad + body;
  }
}

/** The integer verbs and their bases (`s` only for `*big.Int`, whose `Format` accepts it). */
const INTEGER_BASES: Record<string, number> = { v: 10, d: 10, s: 10, b: 2, o: 8, O: 8, x: 16, X: 16 };

function runeOf(value: bigint): string {
  if (value < 0n || value > 0x10ffffn || (value >= 0xd800n && value <= 0xdfffn)) return "\ufffd";
  return String.fromCodePoint(Number(value));
}

function canBackquote(s: string): boolean {
  for (const ch of s) {
    if (ch === "`" || ch === "\ufeff") return false;
    const c = ch.codePointAt(0)!;
    if ((c < 0x20 && ch !== "\t") || c === 0x7f || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** `strconv.FormatFloat` for the verbs fmt passes on (`b` and `x`/`X` included). */
function formatGoFloat(v: number, verb: string, prec: number): string {
  if (verb === "b") return binaryFloat(v);
  if (verb === "x" || verb === "X") return hexFloat(v, prec, verb === "X");
  return formatFloat(
    v,
    verb === "G" || verb === "E" || verb === "g" || verb === "e" ? (verb as "g" | "G" | "e" | "E") : "f",
    prec,
  );
}

function floatParts(v: number): { mantissa: bigint; exp: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(v));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  return biased === 0 ? { mantissa: frac, exp: -1074 } : { mantissa: frac | (1n << 52n), exp: biased - 1075 };
}

/** Go's `%b` for float64: `mantissa p exponent` (`4503599627370496p-52`). */
function binaryFloat(v: number): string {
  const { mantissa, exp } = floatParts(v);
  return `${v < 0 || Object.is(v, -0) ? "-" : ""}${mantissa}p${exp >= 0 ? "+" : ""}${exp}`;
}

/** Go's `%x` for float64: `0x1.8p+01`, with `prec` hex digits after the point (-1: shortest). */
function hexFloat(v: number, prec: number, upper: boolean): string {
  const sign = v < 0 || Object.is(v, -0) ? "-" : "";
  let { mantissa, exp } = floatParts(v);
  if (mantissa === 0n) exp = 0;
  else {
    while (mantissa < 1n << 52n) {
      mantissa <<= 1n;
      exp--;
    }
    exp += 52;
  }
  let frac = mantissa & ((1n << 52n) - 1n);
  let lead = mantissa === 0n ? 0n : 1n;
  let digits = 13;
  if (prec >= 0 && prec < 13) {
    const shift = BigInt(4 * (13 - prec));
    const half = 1n << (shift - 1n);
    const rest = frac & ((1n << shift) - 1n);
    frac >>= shift;
    if (rest > half || (rest === half && (frac & 1n) === 1n)) frac++;
    if (frac >> BigInt(4 * prec) !== 0n) {
      frac &= (1n << BigInt(4 * prec)) - 1n;
      lead++;
      if (lead === 2n) {
        lead = 1n;
        frac >>= 1n;
        exp++;
      }
    }
    digits = prec;
  }
  let hex = digits === 0 ? "" : frac.toString(16).padStart(digits, "0");
  if (prec < 0) hex = hex.replace(/0+$/, "");
  else if (prec > 13) hex = hex + "0".repeat(prec - 13);
  const expText = `${exp >= 0 ? "+" : "-"}${String(Math.abs(exp)).padStart(2, "0")}`;
  const s = `${sign}0x${lead}${hex ? `.${hex}` : ""}p${expText}`;
  return upper ? s.toUpperCase() : s;
}

/** Go's `#` flag for floats: keep a decimal point and trailing zeros. */
function sharpFloat(num: string, verb: string, prec: number): string {
  let digits = verb === "v" || verb === "g" || verb === "G" || verb === "x" ? (prec === -1 ? 6 : prec) : 0;
  let tail = "";
  let body = num;
  let hasPoint = false;
  let sawNonzero = false;
  for (let i = 1; i < body.length; i++) {
    const c = body[i]!;
    if (c === ".") hasPoint = true;
    else if (c === "p" || c === "P" || ((c === "e" || c === "E") && verb !== "x" && verb !== "X")) {
      tail = body.slice(i);
      body = body.slice(0, i);
      break;
    } else {
      if (c !== "0") sawNonzero = true;
      if (sawNonzero) digits--;
    }
  }
  if (!hasPoint) {
    if (body.length === 2 && body[1] === "0") digits--;
    body += ".";
  }
  if (digits > 0) body += "0".repeat(digits);
  return body + tail;
}

/** Go's `fmt.Sprintf` over the Go values OPA passes (see {@link toGoArg}). */
export function goSprintf(format: string, args: readonly GoArg[]): string {
  return new GoPrinter(format, args).run();
}

// ------------------------------------------------------------------------------------ types

function toNumber(args: readonly Value[]): Value {
  const v = arg(args, 0);
  switch (v.type) {
    case "null":
      return int(0);
    case "boolean":
      return int(v.value ? 1 : 0);
    case "number":
      return v;
    case "string": {
      const lower = v.value.replace(/^[+-]+/, "").toLowerCase();
      if (lower === "inf" || lower === "infinity" || lower === "nan")
        return typeError(1, v, "valid number string");
      if (!isNumberText(v.value)) fail(`strconv.ParseFloat: parsing ${goQuote(v.value)}: invalid syntax`);
      const n = numberFromText(v.value);
      if (!Number.isFinite(n.float))
        fail(`strconv.ParseFloat: parsing ${goQuote(v.value)}: value out of range`);
      return n;
    }
    default:
      return typeError(1, v, "null", "boolean", "number", "string");
  }
}

for (const t of ["number", "string", "boolean", "array", "set", "object", "null"] as const) {
  define(`is_${t}`, (args) => makeBoolean(arg(args, 0).type === t));
}
define("type_name", (args) => str(typeName(arg(args, 0))));
define("to_number", toNumber);

// ------------------------------------------------------------------------------------ encoding

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64URL = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/;

function decodeBase64(s: string, alphabet: RegExp): string {
  const stripped = s.replace(/[\r\n]/g, "");
  if (!alphabet.test(stripped)) fail("illegal base64 data");
  return Buffer.from(stripped, "base64").toString("utf8");
}

function base64UrlDecode(args: readonly Value[]): Value {
  let s = stringArg(args, 0);
  if (!s.endsWith("=")) {
    const rem = s.length % 4;
    if (rem === 1) fail(`illegal base64url string: ${s}`);
    s += rem === 2 ? "==" : rem === 3 ? "=" : "";
  }
  return str(decodeBase64(s, BASE64URL));
}

function jsonUnmarshal(args: readonly Value[]): Value {
  const s = stringArg(args, 0);
  try {
    return parseJSON(s);
  } catch (e) {
    if (e instanceof JSONSyntaxError) fail(e.message);
    throw e;
  }
}

function utf8(s: string): Buffer {
  return Buffer.from(s, "utf8");
}

define("json.marshal", (args) => str(toJSONText(arg(args, 0))));
define("json.unmarshal", jsonUnmarshal);
define("base64.encode", (args) => str(utf8(stringArg(args, 0)).toString("base64")));
define("base64.decode", (args) => str(decodeBase64(stringArg(args, 0), BASE64)));
define("base64url.encode", (args) =>
  str(utf8(stringArg(args, 0)).toString("base64").replace(/\+/g, "-").replace(/\//g, "_")),
);
define("base64url.encode_no_pad", (args) => str(utf8(stringArg(args, 0)).toString("base64url")));
define("base64url.decode", base64UrlDecode);
