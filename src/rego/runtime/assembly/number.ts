// Numbers. Three representations share tag 3 (byte 1 = kind):
//   int   (0): exact i64 at +8
//   float (1): f64 at +8 (only produced by arithmetic; never integral values that fit an i64, those
//              are canonicalized to int)
//   ref   (2): exact decimal text (JSON number grammar) at ptr +8, length +4; used for JSON numbers with
//              a fraction or exponent and for integers outside i64. The text is referenced, not copied.
// Comparison is exact across representations: ints and floats compare natively, anything involving a
// ref goes through a normalized decimal form (sign, significant digits, exponent).

import { strtod } from "~lib/util/string";
import { dtoa_buffered } from "~lib/util/number";
import { fail } from "./abort";
import { malloc, mark, release } from "./mem";

@inline export const N_INT: u32 = 0;
@inline export const N_FLOAT: u32 = 1;
@inline export const N_REF: u32 = 2;

@inline
export function numKind(v: usize): u32 {
  return <u32>load<u8>(v, 1);
}

// ---------------------------------------------------------------------------------------------
// Constructors

export function writ_number_int(i: i64): usize {
  const v = malloc(16);
  store<u32>(v, 3); // tag 3, kind 0
  store<u32>(v, 0, 4);
  store<i64>(v, i, 8);
  return v;
}

/** A float number; integral values that fit an i64 become ints (so 3.0 prints as 3, like OPA). */
export function writ_number_float(f: f64): usize {
  if (f == Math.floor(f) && f >= -9.223372036854775808e18 && f < 9.223372036854775808e18) {
    return writ_number_int(<i64>f);
  }
  const v = malloc(16);
  store<u32>(v, 3 | (N_FLOAT << 8));
  store<u32>(v, 0, 4);
  store<f64>(v, f, 8);
  return v;
}

function makeRef(ptr: usize, len: u32): usize {
  const v = malloc(16);
  store<u32>(v, 3 | (N_REF << 8));
  store<u32>(v, len, 4);
  store<u32>(v, <u32>ptr, 8);
  return v;
}

@inline
function isDigit(c: u32): bool {
  return c - 48 < 10;
}

/**
 * Checks JSON number syntax `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` over exactly `len` bytes.
 * Returns 0 for a plain integer, 1 for a number with fraction/exponent, -1 when invalid.
 */
export function scanNumber(ptr: usize, len: usize): i32 {
  let i: usize = 0;
  if (i < len && load<u8>(ptr) == 45) i++;
  if (i >= len) return -1;
  let c = <u32>load<u8>(ptr + i);
  if (c == 48) i++;
  else if (c - 49 < 9) {
    while (i < len && isDigit(load<u8>(ptr + i))) i++;
  } else return -1;
  let plain: i32 = 0;
  if (i < len && load<u8>(ptr + i) == 46) {
    i++;
    const s = i;
    while (i < len && isDigit(load<u8>(ptr + i))) i++;
    if (i == s) return -1;
    plain = 1;
  }
  if (i < len && (load<u8>(ptr + i) | 32) == 101) {
    i++;
    if (i < len && (load<u8>(ptr + i) == 43 || load<u8>(ptr + i) == 45)) i++;
    const s = i;
    while (i < len && isDigit(load<u8>(ptr + i))) i++;
    if (i == s) return -1;
    plain = 1;
  }
  return i == len ? plain : -1;
}

/** Global out-flag of the try* helpers below. */
let tryOk: bool = false;

/** Parses a plain integer literal (validated) as i64; sets tryOk=false on overflow. */
function tryParseInt(ptr: usize, len: usize): i64 {
  let i: usize = 0;
  const neg = load<u8>(ptr) == 45;
  if (neg) i++;
  let m: u64 = 0;
  tryOk = false;
  for (; i < len; i++) {
    const d = <u64>(load<u8>(ptr + i) - 48);
    if (m > 1844674407370955161 || (m == 1844674407370955161 && d > 5)) return 0;
    m = m * 10 + d;
  }
  if (neg) {
    if (m > 0x8000_0000_0000_0000) return 0;
    tryOk = true;
    return <i64>(0 - m);
  }
  if (m > 0x7fff_ffff_ffff_ffff) return 0;
  tryOk = true;
  return <i64>m;
}

/** A number from validated JSON number text: an int when it is a plain integer fitting i64, else a ref. */
export function numberFromText(ptr: usize, len: usize, plainInt: bool): usize {
  if (plainInt) {
    const i = tryParseInt(ptr, len);
    if (tryOk) return writ_number_int(i);
  }
  return makeRef(ptr, <u32>len);
}

/**
 * A number from decimal text in JSON number syntax (e.g. "1.5", "1e400", "123456789012345678901234567890").
 * The text is referenced, not copied. Aborts on invalid syntax.
 */
export function writ_number_ref(ptr: usize, len: u32): usize {
  const k = scanNumber(ptr, len);
  if (k < 0) fail("invalid number literal");
  return numberFromText(ptr, len, k == 0);
}

// ---------------------------------------------------------------------------------------------
// Decimal form: value = sign * 0.d1d2...dn * 10^exp, d1 != 0, dn != 0; zero has sign 0 and n 0.
// Descriptor (16 bytes): +0 i32 sign, +4 u32 n, +8 i32 exp, +12 u32 digits pointer (ASCII '0'..'9').

@inline const EXP_LIMIT: i64 = 1_000_000_000;

const DESC_A: usize = memory.data(16, 8);
const DESC_B: usize = memory.data(16, 8);
const DBUF_A: usize = memory.data(32, 8);
const DBUF_B: usize = memory.data(32, 8);
const DTOA_BUF: usize = memory.data(64, 8);
const FTXT: usize = memory.data(32, 8);

function setDesc(desc: usize, sign: i32, n: u32, exp: i64, digits: usize): void {
  if (exp > EXP_LIMIT) exp = EXP_LIMIT;
  if (exp < -EXP_LIMIT) exp = -EXP_LIMIT;
  store<i32>(desc, n == 0 ? 0 : sign);
  store<u32>(desc, n, 4);
  store<i32>(desc, n == 0 ? 0 : <i32>exp, 8);
  store<u32>(desc, <u32>digits, 12);
}

/** Decodes validated number text into `desc`, writing the mantissa digits to `buf` (>= len bytes). */
export function decodeText(ptr: usize, len: usize, desc: usize, buf: usize): void {
  let i: usize = 0;
  let sign: i32 = 1;
  let c = <u32>load<u8>(ptr);
  if (c == 45 || c == 43) {
    if (c == 45) sign = -1;
    i++;
  }
  let n: u32 = 0;
  let intDigits: i64 = 0;
  while (i < len && isDigit(c = load<u8>(ptr + i))) {
    store<u8>(buf + n++, <u8>c);
    intDigits++;
    i++;
  }
  if (i < len && load<u8>(ptr + i) == 46) {
    i++;
    while (i < len && isDigit(c = load<u8>(ptr + i))) {
      store<u8>(buf + n++, <u8>c);
      i++;
    }
  }
  let e: i64 = 0;
  if (i < len && (load<u8>(ptr + i) | 32) == 101) {
    i++;
    let eneg = false;
    c = load<u8>(ptr + i);
    if (c == 45 || c == 43) {
      eneg = c == 45;
      i++;
    }
    while (i < len && isDigit(c = load<u8>(ptr + i))) {
      if (e < EXP_LIMIT) e = e * 10 + <i64>(c - 48);
      i++;
    }
    if (eneg) e = -e;
  }
  let k: u32 = 0;
  while (k < n && load<u8>(buf + k) == 48) k++;
  let m = n - k;
  while (m > 0 && load<u8>(buf + k + m - 1) == 48) m--;
  setDesc(desc, sign, m, intDigits - <i64>k + e, buf + k);
}

/** Writes the decimal digits of `u` at `buf`, returns the count (1 for zero). */
export function u64Digits(u: u64, buf: usize): u32 {
  let n: u32 = 0;
  let t = u;
  do {
    n++;
    t /= 10;
  } while (t != 0);
  let i = n;
  do {
    i--;
    store<u8>(buf + i, <u8>(48 + <u32>(u % 10)));
    u /= 10;
  } while (u != 0);
  return n;
}

function decodeInt(x: i64, desc: usize, buf: usize): void {
  if (x == 0) {
    setDesc(desc, 0, 0, 0, buf);
    return;
  }
  const u: u64 = x < 0 ? 0 - <u64>x : <u64>x;
  const n = u64Digits(u, buf);
  let m = n;
  while (load<u8>(buf + m - 1) == 48) m--;
  setDesc(desc, x < 0 ? -1 : 1, m, <i64>n, buf);
}

/** Shortest round-trip digits of a finite float (Grisu), decoded into `desc` with digits in `buf`. */
function decodeFloat(f: f64, desc: usize, buf: usize): void {
  if (f == 0 || !isFinite(f)) {
    setDesc(desc, 0, 0, 0, buf);
    return;
  }
  const n = dtoa_buffered<f64>(DTOA_BUF, f);
  for (let i: u32 = 0; i < n; i++) store<u8>(FTXT + i, <u8>load<u16>(DTOA_BUF + (<usize>i << 1)));
  decodeText(FTXT, n, desc, buf);
}

/** Decodes any number into `desc`; refs need heap scratch (callers bracket with mark/release). */
export function decodeNumber(v: usize, desc: usize, buf: usize): void {
  const k = numKind(v);
  if (k == N_INT) decodeInt(load<i64>(v, 8), desc, buf);
  else if (k == N_FLOAT) decodeFloat(load<f64>(v, 8), desc, buf);
  else {
    const len = <usize>load<u32>(v, 4);
    decodeText(<usize>load<u32>(v, 8), len, desc, malloc(len));
  }
}

/** Compares two decimal descriptors. */
export function decCompare(a: usize, b: usize): i32 {
  const sa = load<i32>(a);
  const sb = load<i32>(b);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  let mag: i32 = 0;
  const ea = load<i32>(a, 8);
  const eb = load<i32>(b, 8);
  if (ea != eb) mag = ea > eb ? 1 : -1;
  else {
    const na = load<u32>(a, 4);
    const nb = load<u32>(b, 4);
    const n = na < nb ? na : nb;
    const c = memory.compare(<usize>load<u32>(a, 12), <usize>load<u32>(b, 12), n);
    if (c != 0) mag = c < 0 ? -1 : 1;
    else mag = na < nb ? -1 : na > nb ? 1 : 0;
  }
  return sa > 0 ? mag : -mag;
}

@inline const F64_EXACT_INT: i64 = 9007199254740992; // 2^53

/** Numeric comparison of two number values (-1, 0, 1). */
export function compareNumbers(a: usize, b: usize): i32 {
  const ka = numKind(a);
  const kb = numKind(b);
  if (ka == N_INT && kb == N_INT) {
    const x = load<i64>(a, 8);
    const y = load<i64>(b, 8);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ka != N_REF && kb != N_REF) {
    let exact = true;
    if (ka == N_INT) {
      const x = load<i64>(a, 8);
      exact = x <= F64_EXACT_INT && x >= -F64_EXACT_INT;
    } else if (kb == N_INT) {
      const y = load<i64>(b, 8);
      exact = y <= F64_EXACT_INT && y >= -F64_EXACT_INT;
    }
    if (exact) {
      const x = ka == N_INT ? <f64>load<i64>(a, 8) : load<f64>(a, 8);
      const y = kb == N_INT ? <f64>load<i64>(b, 8) : load<f64>(b, 8);
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
  const m = mark();
  decodeNumber(a, DESC_A, DBUF_A);
  decodeNumber(b, DESC_B, DBUF_B);
  const c = decCompare(DESC_A, DESC_B);
  release(m);
  return c;
}

/** Array index of a number: ints and integral floats (OPA's Number.Int); -1 otherwise. */
export function numberIndex(v: usize): i64 {
  const k = numKind(v);
  if (k == N_INT) {
    const i = load<i64>(v, 8);
    return i < 0 ? -1 : i;
  }
  if (k == N_FLOAT) {
    const f = load<f64>(v, 8);
    return f >= 0 && f < 4294967296.0 && f == Math.floor(f) ? <i64>f : -1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Conversions for builtins

/** Converts a decimal descriptor to i64 if it is an integer in range; sets tryOk. */
function decToI64(desc: usize): i64 {
  tryOk = false;
  const sign = load<i32>(desc);
  if (sign == 0) {
    tryOk = true;
    return 0;
  }
  const n = load<u32>(desc, 4);
  const e = load<i32>(desc, 8);
  if (e < <i32>n || e > 19) return 0;
  const digits = <usize>load<u32>(desc, 12);
  let m: u64 = 0;
  for (let i: i32 = 0; i < e; i++) {
    const d = i < <i32>n ? <u64>(load<u8>(digits + i) - 48) : 0;
    if (m > 1844674407370955161 || (m == 1844674407370955161 && d > 5)) return 0;
    m = m * 10 + d;
  }
  if (sign < 0) {
    if (m > 0x8000_0000_0000_0000) return 0;
    tryOk = true;
    return <i64>(0 - m);
  }
  if (m > 0x7fff_ffff_ffff_ffff) return 0;
  tryOk = true;
  return <i64>m;
}

function toI64(v: usize): i64 {
  const k = numKind(v);
  if (k == N_INT) {
    tryOk = true;
    return load<i64>(v, 8);
  }
  if (k == N_FLOAT) {
    const f = load<f64>(v, 8);
    tryOk = f == Math.floor(f) && f >= -9.223372036854775808e18 && f < 9.223372036854775808e18;
    return tryOk ? <i64>f : 0;
  }
  const m = mark();
  decodeNumber(v, DESC_A, DBUF_A);
  const r = decToI64(DESC_A);
  release(m);
  return r;
}

/**
 * The i64 value of number `v` when it is integral and fits (1, 1.0, 1e3 all qualify); 0 otherwise.
 * `numberI64Ok()` tells which. Refs use heap scratch, released before returning.
 */
export function numberToI64(v: usize): i64 {
  return toI64(v);
}

/** Whether the last `numberToI64` call found an integer that fits an i64. */
export function numberI64Ok(): bool {
  return tryOk;
}

/** 1 if `v` is a number with an integral value that fits an i64 (1, 1.0, 1e3 all qualify). */
export function writ_number_is_int(v: usize): i32 {
  if (v == 0 || load<u8>(v) != 3) return 0;
  toI64(v);
  return tryOk ? 1 : 0;
}

/** The i64 value of `v` when writ_number_is_int(v), else 0. */
export function writ_number_to_i64(v: usize): i64 {
  if (v == 0 || load<u8>(v) != 3) return 0;
  return toI64(v);
}

/** The nearest f64 to `v` (refs are parsed from their text). NaN for non-numbers. */
export function writ_number_to_f64(v: usize): f64 {
  if (v == 0 || load<u8>(v) != 3) return NaN;
  const k = numKind(v);
  if (k == N_INT) return <f64>load<i64>(v, 8);
  if (k == N_FLOAT) return load<f64>(v, 8);
  // strtod reads an AssemblyScript string: UTF-16 code units preceded by their byte size.
  const len = <usize>load<u32>(v, 4);
  const text = <usize>load<u32>(v, 8);
  const m = mark();
  const s = malloc(4 + (len << 1));
  store<u32>(s, <u32>(len << 1));
  for (let i: usize = 0; i < len; i++) store<u16>(s + 4 + (i << 1), <u16>load<u8>(text + i));
  const r = strtod(changetype<string>(s + 4));
  release(m);
  return r;
}

/** Representation of a number: 0 int, 1 float, 2 ref. */
export function writ_number_kind(v: usize): u32 {
  return numKind(v);
}

/**
 * Normalized decimal form of a number, freshly allocated: a 16-byte descriptor
 * {i32 sign (-1/0/1), u32 n, i32 exp, u32 digits} meaning sign * 0.d1..dn * 10^exp, with n significant
 * ASCII digits (no leading or trailing zeros). Exact for every representation (floats use their
 * shortest round-trip digits).
 */
export function writ_number_decimal(v: usize): usize {
  const m = mark();
  decodeNumber(v, DESC_A, DBUF_A);
  const n = load<u32>(DESC_A, 4);
  const sign = load<i32>(DESC_A);
  const exp = load<i32>(DESC_A, 8);
  const src = <usize>load<u32>(DESC_A, 12);
  // Ref digits live in the scratch just released, possibly under the new block: memory.copy is a
  // memmove and runs before the descriptor is stored, so nothing is overwritten before it is read.
  release(m);
  const d = malloc(16 + <usize>n);
  memory.copy(d + 16, src, n);
  store<i32>(d, sign);
  store<u32>(d, n, 4);
  store<i32>(d, exp, 8);
  store<u32>(d, <u32>(d + 16), 12);
  return d;
}

/** Compares two decimal descriptors (as returned by writ_number_decimal). */
export function writ_decimal_compare(a: usize, b: usize): i32 {
  return decCompare(a, b);
}

/**
 * A number from a decimal form: sign * 0.d1..dn * 10^exp (digits are ASCII; leading/trailing zeros are
 * allowed and ignored). Integers fitting i64 become ints, everything else a ref with canonical text.
 */
export function writ_number_from_decimal(sign: i32, digits: usize, n: u32, exp: i32): usize {
  let k: u32 = 0;
  while (k < n && load<u8>(digits + k) == 48) k++;
  let m = n - k;
  while (m > 0 && load<u8>(digits + k + m - 1) == 48) m--;
  const d = digits + k;
  const e = <i32>(<i64>exp - <i64>k);
  if (m == 0 || sign == 0) return writ_number_int(0);
  setDesc(DESC_A, sign < 0 ? -1 : 1, m, <i64>e, d);
  const i = decToI64(DESC_A);
  if (tryOk) return writ_number_int(i);
  // Text: integers as plain digits when short enough, "0.000ddd" and "ddd.ddd" in range, else d.ddde±x.
  const cap = <usize>m + 48;
  const t = malloc(cap);
  let p: usize = 0;
  if (sign < 0) store<u8>(t + p++, 45);
  if (e >= <i32>m && e - <i32>m <= 32) {
    memory.copy(t + p, d, m);
    p += m;
    for (let z = <i32>m; z < e; z++) store<u8>(t + p++, 48);
  } else if (e > 0 && e < <i32>m) {
    memory.copy(t + p, d, e);
    p += e;
    store<u8>(t + p++, 46);
    memory.copy(t + p, d + e, m - e);
    p += m - e;
  } else if (e <= 0 && e > -6) {
    store<u8>(t + p++, 48);
    store<u8>(t + p++, 46);
    for (let z = e; z < 0; z++) store<u8>(t + p++, 48);
    memory.copy(t + p, d, m);
    p += m;
  } else {
    // Long digit strings in exponent form: allocate exactly.
    store<u8>(t + p++, load<u8>(d));
    if (m > 1) {
      store<u8>(t + p++, 46);
      memory.copy(t + p, d + 1, m - 1);
      p += m - 1;
    }
    store<u8>(t + p++, 101);
    let x = <i64>e - 1;
    if (x < 0) {
      store<u8>(t + p++, 45);
      x = -x;
    }
    p += u64Digits(<u64>x, t + p);
  }
  return makeRef(t, <u32>p);
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** Writes the decimal text of `i` at `out` (>= 20 bytes), returns its length. */
export function formatInt(i: i64, out: usize): u32 {
  if (i < 0) {
    store<u8>(out, 45);
    return 1 + u64Digits(0 - <u64>i, out + 1);
  }
  return u64Digits(<u64>i, out);
}

@inline export const FLOAT_TEXT_MAX: usize = 400;

/**
 * Writes a finite float like OPA/Go (big.Float.Text of the shortest digits): integral values in
 * full ('f' format, e.g. 1e21 -> 1000000000000000000000), others in 'g' format with exponent when
 * the decimal exponent is < -4 or >= 6 (1234567.5 -> 1.2345675e+06, 0.00001 -> 1e-05).
 * `out` needs FLOAT_TEXT_MAX bytes. Aborts on NaN/Infinity, which JSON cannot represent.
 */
export function formatFloat(f: f64, out: usize): u32 {
  if (!isFinite(f)) fail("cannot serialize a non-finite number");
  if (f == 0) {
    store<u8>(out, 48);
    return 1;
  }
  decodeFloat(f, DESC_B, DBUF_B);
  const sign = load<i32>(DESC_B);
  const n = <i32>load<u32>(DESC_B, 4);
  const e = load<i32>(DESC_B, 8);
  const d = <usize>load<u32>(DESC_B, 12);
  let p: usize = 0;
  if (sign < 0) store<u8>(out + p++, 45);
  if (e >= n) {
    memory.copy(out + p, d, n);
    p += n;
    for (let z = n; z < e; z++) store<u8>(out + p++, 48);
    return <u32>p;
  }
  const x = e - 1;
  if (x < -4 || x >= 6) {
    store<u8>(out + p++, load<u8>(d));
    if (n > 1) {
      store<u8>(out + p++, 46);
      memory.copy(out + p, d + 1, n - 1);
      p += n - 1;
    }
    store<u8>(out + p++, 101);
    store<u8>(out + p++, x < 0 ? 45 : 43);
    const ax = x < 0 ? -x : x;
    if (ax < 10) store<u8>(out + p++, 48);
    p += u64Digits(<u64>ax, out + p);
    return <u32>p;
  }
  if (e > 0) {
    memory.copy(out + p, d, e);
    p += e;
    store<u8>(out + p++, 46);
    memory.copy(out + p, d + e, n - e);
    p += n - e;
  } else {
    store<u8>(out + p++, 48);
    store<u8>(out + p++, 46);
    for (let z = e; z < 0; z++) store<u8>(out + p++, 48);
    memory.copy(out + p, d, n);
    p += n;
  }
  return <u32>p;
}
