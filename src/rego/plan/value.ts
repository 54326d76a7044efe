/**
 * The reference value model used by the IR interpreter and the builtins: Rego values with OPA's
 * semantics for numbers, ordering, equality and JSON.
 *
 * Numbers. OPA keeps every number as decimal text (`json.Number`): literals and JSON input keep
 * the text they were written with (so `1.0` prints as `1.0`), computed values get a canonical
 * text. Here a number carries that text, its exact value when it is an integer (`bigint`, so
 * integers of any size add, subtract, multiply and compare exactly), and the nearest double.
 * Numbers compare and hash by exact decimal value (`1 == 1.0`, `{1: "a"}` and `{1.0: "a"}` are
 * the same object), as OPA compares them as rationals. Arithmetic on non-integers follows OPA's
 * `big.Float` computation at 64-bit precision ({@link BigFloat}), so that `0.1 + 0.2 == 0.3`.
 *
 * Collections. Objects may have keys of any type, so objects and sets are kept in maps keyed by a
 * canonical text of the value. Iteration, comparison and printing use OPA's order (sorted).
 * Collections are mutable only while they are being built: once a value is shared (stored in a
 * local that another statement reads, returned, memoized), it must not be modified.
 */

// ------------------------------------------------------------------------------------ types

export interface NullValue {
  readonly type: "null";
}

export interface BooleanValue {
  readonly type: "boolean";
  readonly value: boolean;
}

export interface NumberValue {
  readonly type: "number";
  /** The exact value when the number is an integer (`1`, `1.0`, `1e3`), else undefined. */
  readonly int: bigint | undefined;
  /** The nearest double (may be ±Infinity for huge literals such as `1e400`). */
  readonly float: number;
  /** The decimal text: as written for literals and JSON, canonical for computed values. */
  readonly text: string;
}

export interface StringValue {
  readonly type: "string";
  readonly value: string;
}

export interface ArrayValue {
  readonly type: "array";
  readonly items: Value[];
}

export type ObjectEntry = readonly [key: Value, value: Value];

export type Value =
  | NullValue
  | BooleanValue
  | NumberValue
  | StringValue
  | ArrayValue
  | ObjectValue
  | SetValue;

export type ValueType = Value["type"];

/** OPA's order between types: null < boolean < number < string < array < object < set. */
const TYPE_ORDER: Record<ValueType, number> = {
  null: 0,
  boolean: 1,
  number: 2,
  string: 3,
  array: 4,
  object: 5,
  set: 6,
};

// ------------------------------------------------------------------------------------ collections

/** An object: keys and values of any type, iterated in OPA's key order. */
export class ObjectValue {
  readonly type = "object";
  private readonly map: Map<string, ObjectEntry>;
  private sorted: ObjectEntry[] | undefined;
  /** @internal canonical key cache, see {@link canonicalKey}. */
  cachedKey: string | undefined;

  constructor(entries?: Iterable<readonly [Value, Value]>) {
    this.map = new Map();
    if (entries) for (const [k, v] of entries) this.set(k, v);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: Value): Value | undefined {
    return this.map.get(canonicalKey(key))?.[1];
  }

  has(key: Value): boolean {
    return this.map.has(canonicalKey(key));
  }

  /** Inserts or replaces; only for objects still being built. */
  set(key: Value, value: Value): void {
    this.map.set(canonicalKey(key), [key, value]);
    this.sorted = undefined;
    this.cachedKey = undefined;
  }

  /** Removes a key; only for objects still being built. */
  delete(key: Value): void {
    if (this.map.delete(canonicalKey(key))) {
      this.sorted = undefined;
      this.cachedKey = undefined;
    }
  }

  /** The entries sorted by key in OPA's order. */
  entries(): readonly ObjectEntry[] {
    if (!this.sorted) this.sorted = [...this.map.values()].sort((a, b) => compareValues(a[0], b[0]));
    return this.sorted;
  }

  keys(): Value[] {
    return this.entries().map((e) => e[0]);
  }

  /** A shallow copy that may be modified. */
  copy(): ObjectValue {
    return new ObjectValue(this.map.values());
  }
}

/** A set of values, iterated in OPA's order. */
export class SetValue {
  readonly type = "set";
  private readonly map: Map<string, Value>;
  private sorted: Value[] | undefined;
  /** @internal canonical key cache, see {@link canonicalKey}. */
  cachedKey: string | undefined;

  constructor(items?: Iterable<Value>) {
    this.map = new Map();
    if (items) for (const v of items) this.add(v);
  }

  get size(): number {
    return this.map.size;
  }

  has(value: Value): boolean {
    return this.map.has(canonicalKey(value));
  }

  /** Adds an element (an equal element already present is kept); only for sets being built. */
  add(value: Value): void {
    const key = canonicalKey(value);
    if (this.map.has(key)) return;
    this.map.set(key, value);
    this.sorted = undefined;
    this.cachedKey = undefined;
  }

  /** The elements in OPA's order. */
  elements(): readonly Value[] {
    if (!this.sorted) this.sorted = [...this.map.values()].sort(compareValues);
    return this.sorted;
  }

  copy(): SetValue {
    return new SetValue(this.map.values());
  }
}

// ------------------------------------------------------------------------------------ constructors

export const NULL: NullValue = Object.freeze({ type: "null" });
export const TRUE: BooleanValue = Object.freeze({ type: "boolean", value: true });
export const FALSE: BooleanValue = Object.freeze({ type: "boolean", value: false });

export function makeBoolean(value: boolean): BooleanValue {
  return value ? TRUE : FALSE;
}

export function makeString(value: string): StringValue {
  return { type: "string", value };
}

export function makeArray(items: Value[] = []): ArrayValue {
  return { type: "array", items };
}

export function makeObject(entries?: Iterable<readonly [Value, Value]>): ObjectValue {
  return new ObjectValue(entries);
}

export function makeSet(items?: Iterable<Value>): SetValue {
  return new SetValue(items);
}

/** Integers with more digits than this are not expanded to a bigint (`1e100000`). */
const MAX_INTEGER_DIGITS = 4096;

/** A number from decimal text (Rego or JSON number syntax; a leading `+`, `.5` and `5.` are accepted). */
export function numberFromText(text: string): NumberValue {
  const dec = parseDecimal(text);
  if (!dec) throw new RangeError(`not a number: ${JSON.stringify(text)}`);
  const n: NumberValue = { type: "number", int: decimalToBigInt(dec), float: Number(text), text };
  decimals.set(n, dec);
  return n;
}

/** Whether `text` is a number in the syntax {@link numberFromText} accepts. */
export function isNumberText(text: string): boolean {
  return parseDecimal(text) !== undefined;
}

export function numberFromBigInt(value: bigint): NumberValue {
  return { type: "number", int: value, float: Number(value), text: value.toString() };
}

/**
 * A number from a JavaScript double: integral values become exact integers, others get Go's
 * shortest `%g` text (`0.5`, `1e-07`, `1.5e+06`). OPA's own arithmetic results come from
 * {@link numberFromBigFloat}.
 */
export function numberFromFloat(value: number): NumberValue {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  if (Number.isInteger(value)) return numberFromBigInt(BigInt(value));
  return { type: "number", int: undefined, float: value, text: formatFloat(value, "g", -1) };
}

/** A number from a JavaScript number or bigint (integral doubles are exact integers). */
export function makeNumber(value: number | bigint): NumberValue {
  return typeof value === "bigint" ? numberFromBigInt(value) : numberFromFloat(value);
}

// ------------------------------------------------------------------------------------ numbers

/** An exact decimal: `(neg ? -1 : 1) × digits × 10^exp`; `digits` has no leading or trailing zeros ("" is zero). */
interface Decimal {
  neg: boolean;
  digits: string;
  exp: number;
}

const decimals = new WeakMap<NumberValue, Decimal>();
const NUMBER_SYNTAX = /^([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function parseDecimal(text: string): Decimal | undefined {
  const m = NUMBER_SYNTAX.exec(text);
  if (!m) return undefined;
  const intPart = m[2] ?? "";
  const frac = m[3] ?? "";
  if (intPart === "" && frac === "") return undefined;
  const all = (intPart + frac).replace(/^0+/, "");
  const digits = all.replace(/0+$/, "");
  if (digits === "") return { neg: false, digits: "", exp: 0 };
  const exp = (m[4] ? Number.parseInt(m[4], 10) : 0) - frac.length + (all.length - digits.length);
  return { neg: m[1] === "-", digits, exp };
}

function decimalToBigInt(d: Decimal): bigint | undefined {
  if (d.digits === "") return 0n;
  if (d.exp < 0 || d.digits.length + d.exp > MAX_INTEGER_DIGITS) return undefined;
  const magnitude = BigInt(d.digits + "0".repeat(d.exp));
  return d.neg ? -magnitude : magnitude;
}

function decimalOf(n: NumberValue): Decimal {
  let d = decimals.get(n);
  if (!d) {
    d = parseDecimal(n.text) ?? parseDecimal(String(n.int ?? n.float))!;
    decimals.set(n, d);
  }
  return d;
}

function compareMagnitude(a: Decimal, b: Decimal): number {
  if (a.digits === "" || b.digits === "") return (a.digits === "" ? 0 : 1) - (b.digits === "" ? 0 : 1);
  const ma = a.digits.length + a.exp;
  const mb = b.digits.length + b.exp;
  if (ma !== mb) return ma < mb ? -1 : 1;
  const n = Math.min(a.digits.length, b.digits.length);
  for (let i = 0; i < n; i++) {
    const d = a.digits.charCodeAt(i) - b.digits.charCodeAt(i);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return Math.sign(a.digits.length - b.digits.length);
}

function compareDecimals(a: Decimal, b: Decimal): number {
  const sa = a.digits === "" ? 0 : a.neg ? -1 : 1;
  const sb = b.digits === "" ? 0 : b.neg ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  const m = compareMagnitude(a, b);
  return sa < 0 ? 0 - m : m;
}

/** Exact comparison of two numbers. */
export function compareNumbers(a: NumberValue, b: NumberValue): number {
  if (a.int !== undefined && b.int !== undefined) return a.int < b.int ? -1 : a.int > b.int ? 1 : 0;
  // Rounding to doubles is monotonic: different doubles order the exact values the same way.
  if (a.float !== b.float && !Number.isNaN(a.float) && !Number.isNaN(b.float))
    return a.float < b.float ? -1 : 1;
  return compareDecimals(decimalOf(a), decimalOf(b));
}

/** The exact integer value of a number that is integral (OPA's `NumberToInt`), else undefined. */
export function asBigInt(v: Value): bigint | undefined {
  return v.type === "number" ? v.int : undefined;
}

const PLAIN_INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The integer value of a number written as a plain integer that fits an int64 (OPA's
 * `Number.Int()`: `1.0` and `1e3` are not plain integers), else undefined.
 */
export function asPlainInt(v: Value): bigint | undefined {
  if (v.type !== "number" || v.int === undefined || !PLAIN_INTEGER.test(v.text)) return undefined;
  return v.int >= INT64_MIN && v.int <= INT64_MAX ? v.int : undefined;
}

/** Whether the number's text is a plain integer (OPA's `big.Int.SetString(text, 10)` succeeds). */
export function isPlainIntegerText(n: NumberValue): boolean {
  return /^[+-]?\d+$/.test(n.text);
}

// ------------------------------------------------------------------------------------ strings

/** Compares strings by code point (Go compares UTF-8 bytes, which orders code points). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeUnitRank(x) < codeUnitRank(y) ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/** Maps UTF-16 code units so that their order is code point order (surrogates sort above U+FFFF). */
function codeUnitRank(u: number): number {
  if (u >= 0xd800 && u <= 0xdfff) return u + 0x2000;
  if (u >= 0xe000) return u - 0x800;
  return u;
}

/** Number of code points (Go's `utf8.RuneCountInString` for valid strings). */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// ------------------------------------------------------------------------------------ order and equality

/** OPA's total order on values (`ast.Compare`). */
export function compareValues(a: Value, b: Value): number {
  if (a.type !== b.type) return TYPE_ORDER[a.type] < TYPE_ORDER[b.type] ? -1 : 1;
  switch (a.type) {
    case "null":
      return 0;
    case "boolean":
      return a.value === (b as BooleanValue).value ? 0 : a.value ? 1 : -1;
    case "number":
      return compareNumbers(a, b as NumberValue);
    case "string":
      return compareStrings(a.value, (b as StringValue).value);
    case "array":
      return compareSequences(a.items, (b as ArrayValue).items);
    case "object":
      return compareObjects(a, b as ObjectValue);
    case "set":
      return compareSequences(a.elements(), (b as SetValue).elements());
  }
}

function compareSequences(a: readonly Value[], b: readonly Value[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return Math.sign(a.length - b.length);
}

function compareObjects(a: ObjectValue, b: ObjectValue): number {
  const ea = a.entries();
  const eb = b.entries();
  const n = Math.min(ea.length, eb.length);
  for (let i = 0; i < n; i++) {
    const k = compareValues(ea[i]![0], eb[i]![0]);
    if (k !== 0) return k;
    const v = compareValues(ea[i]![1], eb[i]![1]);
    if (v !== 0) return v;
  }
  return Math.sign(ea.length - eb.length);
}

/** Value equality (`1 == 1.0`; sets and objects regardless of insertion order). */
export function valueEquals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a.type !== b.type) return false;
  switch (a.type) {
    case "null":
      return true;
    case "boolean":
      return a.value === (b as BooleanValue).value;
    case "number":
      return compareNumbers(a, b as NumberValue) === 0;
    case "string":
      return a.value === (b as StringValue).value;
    case "array":
      return arraysEqual(a.items, (b as ArrayValue).items);
    case "object":
      return objectsEqual(a, b as ObjectValue);
    case "set":
      return setsEqual(a, b as SetValue);
  }
}

function arraysEqual(a: readonly Value[], b: readonly Value[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!valueEquals(a[i]!, b[i]!)) return false;
  return true;
}

function objectsEqual(a: ObjectValue, b: ObjectValue): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a.entries()) {
    const w = b.get(k);
    if (w === undefined || !valueEquals(v, w)) return false;
  }
  return true;
}

function setsEqual(a: SetValue, b: SetValue): boolean {
  if (a.size !== b.size) return false;
  for (const v of a.elements()) if (!b.has(v)) return false;
  return true;
}

/**
 * A canonical text for a value: equal values (in the sense of {@link valueEquals}) and only they
 * have the same key. Used to hash object keys and set elements.
 */
export function canonicalKey(v: Value): string {
  switch (v.type) {
    case "null":
      return "n";
    case "boolean":
      return v.value ? "t" : "f";
    case "number":
      return numberKey(v);
    case "string":
      return JSON.stringify(v.value);
    case "array":
      return `[${v.items.map(canonicalKey).join(",")}]`;
    case "object":
      v.cachedKey ??= `{${v
        .entries()
        .map(([k, x]) => `${canonicalKey(k)}:${canonicalKey(x)}`)
        .join(",")}}`;
      return v.cachedKey;
    case "set":
      v.cachedKey ??= `<${v.elements().map(canonicalKey).join(",")}>`;
      return v.cachedKey;
  }
}

function numberKey(n: NumberValue): string {
  if (n.int !== undefined && n.int % 10n !== 0n) return `#${n.int}`;
  const d = decimalOf(n);
  if (d.digits === "") return "#0";
  return `#${d.neg ? "-" : ""}${d.digits}${d.exp !== 0 ? `e${d.exp}` : ""}`;
}

// ------------------------------------------------------------------------------------ collection access

/** `source[key]` as the IR's `dot` and Rego refs see it: undefined when there is no such element. */
export function lookup(source: Value | undefined, key: Value): Value | undefined {
  if (!source) return undefined;
  switch (source.type) {
    case "object":
      return source.get(key);
    case "array": {
      const i = asPlainInt(key);
      return i !== undefined && i >= 0n && i < BigInt(source.items.length)
        ? source.items[Number(i)]
        : undefined;
    }
    case "set":
      return source.has(key) ? key : undefined;
    default:
      return undefined;
  }
}

/** The (key, value) pairs a scan visits: array index/element, object key/value, set element/element. */
export function collectionEntries(
  source: Value | undefined,
): ReadonlyArray<readonly [Value, Value]> | undefined {
  if (!source) return undefined;
  switch (source.type) {
    case "array":
      return source.items.map((v, i) => [numberFromBigInt(BigInt(i)), v] as const);
    case "object":
      return source.entries();
    case "set":
      return source.elements().map((v) => [v, v] as const);
    default:
      return undefined;
  }
}

/** `count(x)` for arrays, objects, sets and strings (code points); undefined otherwise. */
export function valueLength(v: Value | undefined): number | undefined {
  if (!v) return undefined;
  switch (v.type) {
    case "array":
      return v.items.length;
    case "object":
    case "set":
      return v.size;
    case "string":
      return codePointLength(v.value);
    default:
      return undefined;
  }
}

// ------------------------------------------------------------------------------------ JSON in

/**
 * Converts parsed JSON (or any plain JavaScript data) to a value: `bigint`s are exact integers,
 * JavaScript `Set`s become sets, `ObjectValue`/`SetValue` instances are taken as they are. Other
 * values (numbers, strings, arrays) must be given as plain data. Throws a TypeError for anything
 * else (undefined, functions, non-finite numbers).
 */
export function fromJSON(x: unknown): Value {
  if (x === null) return NULL;
  switch (typeof x) {
    case "boolean":
      return makeBoolean(x);
    case "number":
      return numberFromJS(x);
    case "bigint":
      return numberFromBigInt(x);
    case "string":
      return makeString(x);
    case "object":
      return fromJSONObject(x);
    default:
      throw new TypeError(`cannot convert ${typeof x} to a Rego value`);
  }
}

function numberFromJS(x: number): NumberValue {
  if (!Number.isFinite(x)) throw new TypeError(`cannot convert ${x} to a Rego value`);
  if (Number.isInteger(x)) return numberFromBigInt(BigInt(x));
  return numberFromText(String(x));
}

function fromJSONObject(x: object): Value {
  if (Array.isArray(x)) return makeArray(x.map(fromJSON));
  if (x instanceof Set) return makeSet([...x].map(fromJSON));
  if (x instanceof ObjectValue || x instanceof SetValue) return x;
  const obj = new ObjectValue();
  for (const [k, v] of Object.entries(x)) obj.set(makeString(k), fromJSON(v));
  return obj;
}

/** A JSON syntax error from {@link parseJSON}. */
export class JSONSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JSONSyntaxError";
  }
}

/**
 * Parses JSON text (RFC 8259, as Go's `encoding/json` accepts it) keeping the exact text of
 * numbers; duplicate object keys keep the last value. Throws {@link JSONSyntaxError}.
 */
export function parseJSON(text: string): Value {
  return parseText(text, false);
}

/**
 * Parses Rego value text as the runtime's `opa_value_dump` writes it: JSON plus sets (`{1, 2}`,
 * `set()`) and object keys of any type. Numbers keep their exact text.
 */
export function parseValueText(text: string): Value {
  return parseText(text, true);
}

function parseText(text: string, rego: boolean): Value {
  const p = new JSONParser(text, rego);
  p.skipSpace();
  const v = p.value();
  p.skipSpace();
  if (!p.atEnd()) p.fail("invalid character after top-level value");
  return v;
}

const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const JSON_ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

class JSONParser {
  private pos = 0;

  constructor(
    private readonly text: string,
    /** Also read Rego value text: sets and non-string object keys. */
    private readonly rego = false,
  ) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  fail(message: string): never {
    throw new JSONSyntaxError(`${message} at offset ${this.pos}`);
  }

  skipSpace(): void {
    while (this.pos < this.text.length && " \t\n\r".includes(this.text[this.pos]!)) this.pos++;
  }

  value(): Value {
    const c = this.text[this.pos];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return makeString(this.string());
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    if (this.rego && this.text.startsWith("set()", this.pos)) {
      this.pos += 5;
      return makeSet();
    }
    for (const [word, value] of [
      ["true", TRUE],
      ["false", FALSE],
      ["null", NULL],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail("invalid character looking for beginning of value");
  }

  private expect(c: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== c) this.fail(`expected ${JSON.stringify(c)}`);
    this.pos++;
  }

  private object(): ObjectValue | SetValue {
    const obj = new ObjectValue();
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return obj;
    }
    if (this.rego) return this.regoObjectOrSet();
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') this.fail("expected object key string");
      const key = this.string();
      this.expect(":");
      this.skipSpace();
      obj.set(makeString(key), this.value());
      this.skipSpace();
      if (this.text[this.pos] === "}") {
        this.pos++;
        return obj;
      }
      this.expect(",");
    }
  }

  /** After `{` of a non-empty collection in Rego text: an object if its first item has a `:`. */
  private regoObjectOrSet(): ObjectValue | SetValue {
    const first = this.value();
    this.skipSpace();
    if (this.text[this.pos] !== ":") {
      const items = [first];
      for (;;) {
        this.skipSpace();
        if (this.text[this.pos] === "}") {
          this.pos++;
          return makeSet(items);
        }
        this.expect(",");
        this.skipSpace();
        items.push(this.value());
      }
    }
    const obj = new ObjectValue();
    let key = first;
    for (;;) {
      this.expect(":");
      this.skipSpace();
      obj.set(key, this.value());
      this.skipSpace();
      if (this.text[this.pos] === "}") {
        this.pos++;
        return obj;
      }
      this.expect(",");
      this.skipSpace();
      key = this.value();
    }
  }

  private array(): ArrayValue {
    const items: Value[] = [];
    this.pos++;
    this.skipSpace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return makeArray(items);
    }
    for (;;) {
      this.skipSpace();
      items.push(this.value());
      this.skipSpace();
      if (this.text[this.pos] === "]") {
        this.pos++;
        return makeArray(items);
      }
      this.expect(",");
    }
  }

  private number(): NumberValue {
    JSON_NUMBER.lastIndex = this.pos;
    const m = JSON_NUMBER.exec(this.text);
    if (!m || m[0] === "-") this.fail("invalid number");
    this.pos += m[0].length;
    return numberFromText(m[0]);
  }

  string(): string {
    this.pos++;
    let out = "";
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) this.fail("unterminated string");
      this.pos++;
      if (c === '"') return out;
      if (c === "\\") out += this.escape();
      else if (c < " ") this.fail("invalid character in string literal");
      else out += c;
    }
  }

  private escape(): string {
    const c = this.text[this.pos++];
    if (c === undefined) return this.fail("unterminated string");
    if (c !== "u") {
      const e = JSON_ESCAPES[c];
      if (e === undefined) this.fail("invalid escape in string");
      return e;
    }
    const hex = this.text.slice(this.pos, this.pos + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\u escape");
    this.pos += 4;
    return String.fromCharCode(Number.parseInt(hex, 16));
  }
}

// ------------------------------------------------------------------------------------ JSON out

/**
 * Converts a value to plain JSON data as OPA serializes it: sets become arrays (sorted), object
 * keys that are not strings become their JSON text (`1` → `"1"`, `[1,"a"]` → `"[1,\"a\"]"`),
 * object keys come out sorted. Numbers become JavaScript numbers (big integers lose precision:
 * use {@link toJSONText} to keep them).
 */
export function toJSON(v: Value): unknown {
  switch (v.type) {
    case "null":
      return null;
    case "boolean":
      return v.value;
    case "number":
      return v.int !== undefined && Number.isSafeInteger(Number(v.int)) ? Number(v.int) : v.float;
    case "string":
      return v.value;
    case "array":
      return v.items.map(toJSON);
    case "set":
      return v.elements().map(toJSON);
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, x] of jsonMembers(v)) out[k] = toJSON(x);
      return out;
    }
  }
}

export interface JSONTextOptions {
  /** Escape `<`, `>` and `&` as Go's `json.Marshal` does (default true). */
  escapeHTML?: boolean;
}

/** JSON text as Go's `json.Marshal` writes OPA values: compact, keys sorted, numbers exact. */
export function toJSONText(v: Value, options: JSONTextOptions = {}): string {
  const escapeHTML = options.escapeHTML ?? true;
  const write = (x: Value): string => {
    switch (x.type) {
      case "null":
        return "null";
      case "boolean":
        return x.value ? "true" : "false";
      case "number":
        return jsonNumberText(x);
      case "string":
        return goJSONString(x.value, escapeHTML);
      case "array":
        return `[${x.items.map(write).join(",")}]`;
      case "set":
        return `[${x.elements().map(write).join(",")}]`;
      case "object":
        return `{${jsonMembers(x)
          .map(([k, y]) => `${goJSONString(k, escapeHTML)}:${write(y)}`)
          .join(",")}}`;
    }
  };
  return write(v);
}

/**
 * Rego value text (what the runtime's `opa_value_parse` reads): JSON, with sets as `{1,2}` or
 * `set()` and object keys written as values. Numbers exact, strings as JSON strings.
 */
export function toValueText(v: Value): string {
  switch (v.type) {
    case "null":
      return "null";
    case "boolean":
      return v.value ? "true" : "false";
    case "number":
      return jsonNumberText(v);
    case "string":
      return JSON.stringify(v.value);
    case "array":
      return `[${v.items.map(toValueText).join(",")}]`;
    case "set":
      return v.size === 0 ? "set()" : `{${v.elements().map(toValueText).join(",")}}`;
    case "object":
      return `{${v
        .entries()
        .map(([k, x]) => `${toValueText(k)}:${toValueText(x)}`)
        .join(",")}}`;
  }
}

/** Object members with stringified keys, sorted as Go sorts map keys; a later key wins a clash. */
function jsonMembers(obj: ObjectValue): Array<[string, Value]> {
  const members = new Map<string, Value>();
  for (const [k, v] of obj.entries()) members.set(jsonKey(k), v);
  return [...members].sort((a, b) => compareStrings(a[0], b[0]));
}

function jsonKey(k: Value): string {
  return k.type === "string" ? k.value : toJSONText(k);
}

function jsonNumberText(n: NumberValue): string {
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(n.text)) return n.text;
  if (n.int !== undefined) return n.int.toString();
  return formatFloat(n.float, "g", -1);
}

/** A string as Go's `encoding/json` writes it. */
export function goJSONString(s: string, escapeHTML = true): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (
      c < 0x20 ||
      (escapeHTML && (ch === "<" || ch === ">" || ch === "&")) ||
      c === 0x2028 ||
      c === 0x2029
    ) {
      out += `\\u${c.toString(16).padStart(4, "0")}`;
    } else if (c >= 0xd800 && c <= 0xdfff) out += "\ufffd";
    else out += ch;
  }
  return `${out}"`;
}

// ------------------------------------------------------------------------------------ Rego text

/**
 * The Rego text of a value, as OPA's `Value.String()` prints it (used by `sprintf` for
 * composites and by `print`): strings quoted Go-style, `set()` for the empty set.
 */
export function formatValue(v: Value): string {
  switch (v.type) {
    case "null":
      return "null";
    case "boolean":
      return v.value ? "true" : "false";
    case "number":
      return v.text;
    case "string":
      return goQuote(v.value);
    case "array":
      return `[${v.items.map(formatValue).join(", ")}]`;
    case "object":
      return `{${v
        .entries()
        .map(([k, x]) => `${formatValue(k)}: ${formatValue(x)}`)
        .join(", ")}}`;
    case "set":
      return v.size === 0 ? "set()" : `{${v.elements().map(formatValue).join(", ")}}`;
  }
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export function isGoPrintable(ch: string): boolean {
  return ch === " " || PRINTABLE.test(ch);
}

const QUOTE_ESCAPES: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
};

/** Go's `strconv.Quote` (or `QuoteToASCII` with `asciiOnly`). */
export function goQuote(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) out += quoteRune(ch, '"', asciiOnly);
  return `${out}"`;
}

/** One rune of Go's quoting, with `quote` the delimiter being used. */
export function quoteRune(ch: string, quote: string, asciiOnly: boolean): string {
  const c = ch.codePointAt(0)!;
  if (ch === quote || ch === "\\") return `\\${ch}`;
  if (c >= 0xd800 && c <= 0xdfff) return asciiOnly ? "\\ufffd" : "\ufffd";
  if (isGoPrintable(ch) && (!asciiOnly || c < 0x80)) return ch;
  const special = QUOTE_ESCAPES[ch];
  if (special) return special;
  if (c < 0x20 || c === 0x7f) return `\\x${c.toString(16).padStart(2, "0")}`;
  if (c < 0x10000) return `\\u${c.toString(16).padStart(4, "0")}`;
  return `\\U${c.toString(16).padStart(8, "0")}`;
}

// ------------------------------------------------------------------------------------ Go float formatting

/** Decimal digits of a non-negative double: `0.d1d2… × 10^dp` (`d` empty for zero). */
interface Digits {
  d: string;
  dp: number;
}

/** The shortest digits that read back as the same double (what Go's `-1` precision uses). */
function shortestDigits(x: number): Digits {
  if (x === 0) return { d: "", dp: 0 };
  const [mantissa, exponent] = Math.abs(x).toExponential().split("e");
  const d = mantissa!.replace(".", "").replace(/0+$/, "");
  return { d, dp: Number(exponent) + 1 };
}

/** All the digits of the exact binary value of a double. */
function exactDigits(x: number): Digits {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  if (biased !== 0) mantissa |= 1n << 52n;
  const e = biased === 0 ? -1074 : biased - 1075;
  if (mantissa === 0n) return { d: "", dp: 0 };
  const s = e >= 0 ? (mantissa << BigInt(e)).toString() : (mantissa * 5n ** BigInt(-e)).toString();
  const dp = e >= 0 ? s.length : s.length + e;
  return { d: s.replace(/0+$/, ""), dp };
}

/** Rounds exact digits to `nd` significant digits, half to even (Go's `decimal.Round`). */
function roundDigits(digits: Digits, nd: number): Digits {
  const { d, dp } = digits;
  if (nd < 0 || nd >= d.length) return nd < 0 ? { d: "", dp: 0 } : digits;
  const next = d.charCodeAt(nd) - 48;
  const exactHalf = next === 5 && nd + 1 === d.length;
  const up =
    next > 5 || (next === 5 && !exactHalf) || (exactHalf && nd > 0 && (d.charCodeAt(nd - 1) - 48) % 2 === 1);
  if (!up) return { d: d.slice(0, nd).replace(/0+$/, ""), dp };
  let i = nd - 1;
  while (i >= 0 && d[i] === "9") i--;
  if (i < 0) return { d: "1", dp: dp + 1 };
  return { d: d.slice(0, i) + String.fromCharCode(d.charCodeAt(i) + 1), dp };
}

function formatE(digits: Digits, prec: number, e: "e" | "E"): string {
  const { d } = digits;
  let out = d[0] ?? "0";
  if (prec > 0) {
    out += ".";
    const frac = d.slice(1, Math.min(d.length, prec + 1));
    out += frac + "0".repeat(prec - frac.length);
  }
  const exp = d.length === 0 ? 0 : digits.dp - 1;
  const sign = exp < 0 ? "-" : "+";
  return `${out}${e}${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
}

function formatF(digits: Digits, prec: number): string {
  const { d, dp } = digits;
  let out = dp > 0 ? d.slice(0, dp) + "0".repeat(Math.max(0, dp - d.length)) : "0";
  if (prec > 0) {
    out += ".";
    for (let i = 1; i <= prec; i++) {
      const j = dp + i - 1;
      out += j >= 0 && j < d.length ? d[j] : "0";
    }
  }
  return out;
}

export type FloatFormat = "e" | "E" | "f" | "g" | "G";

/**
 * Go's `strconv.FormatFloat(x, fmt, prec, 64)` for finite doubles: exact rounding (half to even)
 * for an explicit precision, shortest round-trip digits for `prec < 0`.
 */
export function formatFloat(x: number, fmt: FloatFormat, prec: number): string {
  const neg = x < 0 || Object.is(x, -0);
  const shortest = prec < 0;
  let digits: Digits;
  if (shortest) {
    digits = shortestDigits(x);
    prec =
      fmt === "f"
        ? Math.max(digits.d.length - digits.dp, 0)
        : fmt === "g" || fmt === "G"
          ? digits.d.length
          : Math.max(digits.d.length - 1, 0);
  } else {
    const exact = exactDigits(x);
    if (fmt === "e" || fmt === "E") digits = roundDigits(exact, prec + 1);
    else if (fmt === "f") digits = roundDigits(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      digits = roundDigits(exact, prec);
    }
  }
  return (neg ? "-" : "") + formatDigits(digits, fmt, prec, shortest);
}

function formatDigits(digits: Digits, fmt: FloatFormat, prec: number, shortest: boolean): string {
  if (fmt === "e" || fmt === "E") return formatE(digits, prec, fmt);
  if (fmt === "f") return formatF(digits, prec);
  let eprec = prec;
  if (eprec > digits.d.length && digits.d.length >= digits.dp) eprec = digits.d.length;
  if (shortest) eprec = 6;
  const exp = digits.dp - 1;
  if (digits.d.length !== 0 && (exp < -4 || exp >= eprec)) {
    return formatE(digits, Math.min(prec, digits.d.length) - 1, fmt === "g" ? "e" : "E");
  }
  return formatF(digits, Math.max((prec > digits.dp ? digits.d.length : prec) - digits.dp, 0));
}

// ------------------------------------------------------------------------------------ OPA's float arithmetic

/**
 * A binary floating-point number as Go's `big.Float` holds it: `(-1)^neg × mant × 2^exp`, with
 * `mant` rounded to `prec` bits. OPA computes with non-integers this way: operands are read from
 * their decimal text at 64 bits (`big.Float.SetString`), results are rounded to the operation's
 * precision and written back as the shortest decimal text that reads back to them. That is why
 * `0.1 + 0.2 == 0.3` holds in OPA, and `1 / 3` is `0.33333333333333333333`.
 */
export interface BigFloat {
  readonly neg: boolean;
  readonly mant: bigint;
  readonly exp: number;
  readonly prec: number;
}

/** The precision `big.Float.SetString` gives numbers, which OPA's arithmetic keeps. */
export const OPA_FLOAT_PREC = 64;

/** Decimal exponents beyond this are not expanded (`1e999999999` is not a float operand). */
const MAX_DECIMAL_EXPONENT = 100_000;

function bitLength(n: bigint): number {
  return n.toString(2).length;
}

/** Rounds `(-1)^neg × num / den × 2^exp` (num ≥ 0, den > 0) to `prec` bits, half to even. */
function roundRational(neg: boolean, num: bigint, den: bigint, exp: number, prec: number): BigFloat {
  if (num === 0n) return { neg, mant: 0n, exp: 0, prec };
  let shift = prec - (bitLength(num) - bitLength(den));
  const divide = (): [bigint, bigint, bigint] => {
    const n = shift >= 0 ? num << BigInt(shift) : num;
    const d = shift >= 0 ? den : den << BigInt(-shift);
    return [n / d, n % d, d];
  };
  let [q, r, d] = divide();
  const limit = 1n << BigInt(prec);
  if (q >= limit) {
    shift--;
    [q, r, d] = divide();
  }
  if (2n * r > d || (2n * r === d && (q & 1n) === 1n)) q++;
  if (q === limit) {
    q >>= 1n;
    shift--;
  }
  return { neg, mant: q, exp: exp - shift, prec };
}

/** A number's value at OPA's float precision (`NumberToFloat`). */
export function toBigFloat(n: NumberValue, prec = OPA_FLOAT_PREC): BigFloat {
  const d = decimalOf(n);
  if (d.digits === "") return { neg: n.text.startsWith("-"), mant: 0n, exp: 0, prec };
  if (Math.abs(d.exp) > MAX_DECIMAL_EXPONENT) throw new RangeError(`number out of range: ${n.text}`);
  const digits = BigInt(d.digits);
  return d.exp >= 0
    ? roundRational(d.neg, digits * 10n ** BigInt(d.exp), 1n, 0, prec)
    : roundRational(d.neg, digits, 10n ** BigInt(-d.exp), 0, prec);
}

export function bigFloatFromBigInt(n: bigint, prec = OPA_FLOAT_PREC): BigFloat {
  return roundRational(n < 0n, n < 0n ? -n : n, 1n, 0, prec);
}

function signed(f: BigFloat, shift: number): bigint {
  const m = f.mant << BigInt(shift);
  return f.neg ? -m : m;
}

/** `a + b` rounded to `prec` bits (Go's `big.Float.Add`). */
export function bigFloatAdd(a: BigFloat, b: BigFloat, prec = Math.max(a.prec, b.prec)): BigFloat {
  if (a.mant === 0n && b.mant === 0n) return { neg: a.neg && b.neg, mant: 0n, exp: 0, prec };
  if (a.mant === 0n) return roundRational(b.neg, b.mant, 1n, b.exp, prec);
  if (b.mant === 0n) return roundRational(a.neg, a.mant, 1n, a.exp, prec);
  const exp = Math.min(a.exp, b.exp);
  const sum = signed(a, a.exp - exp) + signed(b, b.exp - exp);
  return roundRational(sum < 0n, sum < 0n ? -sum : sum, 1n, exp, prec);
}

export function bigFloatNeg(a: BigFloat): BigFloat {
  return { ...a, neg: !a.neg };
}

/** `a × b` rounded to `prec` bits (Go's `big.Float.Mul`). */
export function bigFloatMul(a: BigFloat, b: BigFloat, prec = Math.max(a.prec, b.prec)): BigFloat {
  return roundRational(a.neg !== b.neg, a.mant * b.mant, 1n, a.exp + b.exp, prec);
}

/** `a / b` rounded to `prec` bits (Go's `big.Float.Quo`); `b` must not be zero. */
export function bigFloatQuo(a: BigFloat, b: BigFloat, prec = Math.max(a.prec, b.prec)): BigFloat {
  if (b.mant === 0n) throw new RangeError("division by zero");
  return roundRational(a.neg !== b.neg, a.mant, b.mant, a.exp - b.exp, prec);
}

/** The integer part, truncated toward zero (Go's `big.Float.Int`). */
export function bigFloatTrunc(a: BigFloat): bigint {
  const magnitude = a.exp >= 0 ? a.mant << BigInt(a.exp) : a.mant >> BigInt(-a.exp);
  return a.neg ? -magnitude : magnitude;
}

export function bigFloatIsInt(a: BigFloat): boolean {
  return a.exp >= 0 || (a.mant & ((1n << BigInt(-a.exp)) - 1n)) === 0n;
}

function sameBigFloat(a: BigFloat, b: BigFloat): boolean {
  if (a.mant === 0n || b.mant === 0n) return a.mant === b.mant;
  const exp = Math.min(a.exp, b.exp);
  return signed(a, a.exp - exp) === signed(b, b.exp - exp);
}

/** All the decimal digits of a (non-zero) binary float's magnitude. */
function bigFloatDigits(a: BigFloat): Digits {
  const s = a.exp >= 0 ? (a.mant << BigInt(a.exp)).toString() : (a.mant * 5n ** BigInt(-a.exp)).toString();
  const dp = a.exp >= 0 ? s.length : s.length + a.exp;
  return { d: s.replace(/0+$/, ""), dp };
}

/** The shortest digits of the magnitude that read back (at the float's precision) to the same value. */
function bigFloatShortest(a: BigFloat): Digits {
  const exact = bigFloatDigits(a);
  for (let nd = 1; nd < exact.d.length; nd++) {
    const candidate = roundDigits(exact, nd);
    const text = `${candidate.d}e${candidate.dp - candidate.d.length}`;
    if (sameBigFloat(toBigFloat(numberFromText(text), a.prec), { ...a, neg: false })) return candidate;
  }
  return exact;
}

/**
 * The number OPA makes of a float result (`FloatToNumber`): Go's shortest `%f` text for
 * integral values, shortest `%g` otherwise (`0.3`, `1e-07`).
 */
export function numberFromBigFloat(a: BigFloat): NumberValue {
  if (a.mant === 0n) return numberFromText(a.neg ? "-0" : "0");
  const digits = bigFloatShortest(a);
  const fmt: FloatFormat = bigFloatIsInt(a) ? "f" : "g";
  const prec = fmt === "f" ? Math.max(digits.d.length - digits.dp, 0) : digits.d.length;
  return numberFromText((a.neg ? "-" : "") + formatDigits(digits, fmt, prec, true));
}
