// Exact arithmetic on decimal descriptors (see number.ts: {i32 sign, u32 n, i32 exp, u32 digits},
// value = sign * 0.d1..dn * 10^exp with ASCII digits). Used when numbers are not both i64 ints:
// big integers (OPA computes them exactly with big.Int) and decimal fractions. Results longer than
// MAX_DIGITS digit positions are not computed (the functions return 0 and callers fall back to f64).
//
// Work buffers come from a static area when small, from the heap otherwise; results are built by
// writ_number_from_decimal (an int when the value fits i64, else a ref with canonical text).

import { calloc } from "../mem";
import { writ_number_from_decimal, writ_number_int } from "../number";

/** Widest result, in decimal digit positions, computed exactly (10^2048 and beyond go to f64). */
@inline export const MAX_DIGITS: i64 = 2048;

/** Largest decimal exponent of an exact result (what number.ts clamps exponents to). */
@inline const MAX_EXP: i64 = 1_000_000_000;

@inline const WORK_CAP: usize = 512;
const WORK: usize = memory.data(WORK_CAP, 8);

/** A zeroed work buffer of `size` bytes: static when it fits, else fresh heap memory. */
function workBuffer(size: usize): usize {
  if (size <= WORK_CAP) {
    memory.fill(WORK, 0, size);
    return WORK;
  }
  return calloc(size);
}

@inline
export function descSign(d: usize): i32 {
  return load<i32>(d);
}

@inline
export function descCount(d: usize): u32 {
  return load<u32>(d, 4);
}

@inline
export function descExp(d: usize): i32 {
  return load<i32>(d, 8);
}

@inline
export function descDigits(d: usize): usize {
  return <usize>load<u32>(d, 12);
}

/** 1 if the descriptor is an integer (zero included). */
export function descIsInteger(d: usize): bool {
  return descSign(d) == 0 || <i32>descCount(d) <= descExp(d);
}

/** Compares the magnitudes |a| and |b| of two nonzero descriptors. */
function compareMagnitudes(a: usize, b: usize): i32 {
  const ea = descExp(a);
  const eb = descExp(b);
  if (ea != eb) return ea > eb ? 1 : -1;
  const na = descCount(a);
  const nb = descCount(b);
  const c = memory.compare(descDigits(a), descDigits(b), na < nb ? na : nb);
  if (c != 0) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** The number `sign * |d|`. */
export function descToNumber(d: usize, sign: i32): usize {
  if (sign == 0 || descSign(d) == 0) return writ_number_int(0);
  return writ_number_from_decimal(sign, descDigits(d), descCount(d), descExp(d));
}

/** Converts `n` digit values (0..9) at `buf` to ASCII in place. */
function toAscii(buf: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) store<u8>(buf + i, load<u8>(buf + i) + 48);
}

/**
 * Adds the digits of `d` into the digit values at `buf`, whose slot 0 holds place 10^`top`, with
 * carries (the caller leaves a zero slot above the highest place for the final carry).
 */
function addDigitsInto(buf: usize, top: i64, d: usize): void {
  const n = <i64>descCount(d);
  const digits = descDigits(d);
  const first = top - <i64>descExp(d) + 1; // slot of d's first digit
  let carry: u32 = 0;
  for (let i = n - 1; i >= 0; i--) {
    const at = buf + <usize>(first + i);
    let v = <u32>load<u8>(at) + <u32>load<u8>(digits + <usize>i) - 48 + carry;
    carry = v >= 10 ? 1 : 0;
    store<u8>(at, <u8>(v - carry * 10));
  }
  for (let at = buf + <usize>first - 1; carry != 0; at--) {
    const v = <u32>load<u8>(at) + 1;
    carry = v == 10 ? 1 : 0;
    store<u8>(at, <u8>(v - carry * 10));
  }
}

/** Subtracts the digits of `d` from the digit values at `buf` (laid out as in addDigitsInto). */
function subtractDigitsFrom(buf: usize, top: i64, d: usize): void {
  const n = <i64>descCount(d);
  const digits = descDigits(d);
  const first = top - <i64>descExp(d) + 1;
  let borrow: i32 = 0;
  for (let i = n - 1; i >= 0; i--) {
    const at = buf + <usize>(first + i);
    let v = <i32>load<u8>(at) - (<i32>load<u8>(digits + <usize>i) - 48) - borrow;
    borrow = v < 0 ? 1 : 0;
    store<u8>(at, <u8>(v + borrow * 10));
  }
  for (let at = buf + <usize>first - 1; borrow != 0; at--) {
    const v = <i32>load<u8>(at) - 1;
    borrow = v < 0 ? 1 : 0;
    store<u8>(at, <u8>(v + borrow * 10));
  }
}

/**
 * Exact `a + b` (or `a - b` when `negateB`) of two descriptors as a number value, or 0 when the
 * result would span more than MAX_DIGITS digit positions.
 */
export function decimalAdd(a: usize, b: usize, negateB: bool): usize {
  const sa = descSign(a);
  const sb = negateB ? -descSign(b) : descSign(b);
  if (sb == 0) return descToNumber(a, sa);
  if (sa == 0) return descToNumber(b, sb);
  const ea = <i64>descExp(a);
  const eb = <i64>descExp(b);
  const lowA = ea - <i64>descCount(a);
  const lowB = eb - <i64>descCount(b);
  const low = lowA < lowB ? lowA : lowB;
  const high = ea > eb ? ea : eb; // places 10^low .. 10^(high-1), plus one slot for a carry
  const width = high - low + 1;
  if (width > MAX_DIGITS) return 0;
  const w = <usize>width;
  const buf = workBuffer(w);
  let sign = sa;
  if (sa == sb) {
    addDigitsInto(buf, high, a);
    addDigitsInto(buf, high, b);
  } else {
    const c = compareMagnitudes(a, b);
    if (c == 0) return writ_number_int(0);
    const larger = c > 0 ? a : b;
    addDigitsInto(buf, high, larger);
    subtractDigitsFrom(buf, high, c > 0 ? b : a);
    sign = c > 0 ? sa : sb;
  }
  toAscii(buf, w);
  return writ_number_from_decimal(sign, buf, <u32>w, <i32>(high + 1));
}

/** Exact `a * b` of two descriptors as a number value, or 0 when it has more than MAX_DIGITS digits. */
export function decimalMul(a: usize, b: usize): usize {
  const sign = descSign(a) * descSign(b);
  if (sign == 0) return writ_number_int(0);
  const na = <usize>descCount(a);
  const nb = <usize>descCount(b);
  const exp = <i64>descExp(a) + <i64>descExp(b);
  if (<i64>(na + nb) > MAX_DIGITS || exp > MAX_EXP || exp < -MAX_EXP) return 0;
  const w = na + nb;
  // Column sums in u32 (at most 2048 * 81 each), then one carry pass into the digit bytes after them.
  const cols = workBuffer((w << 2) + w);
  const out = cols + (w << 2);
  const da = descDigits(a);
  const db = descDigits(b);
  for (let i: usize = 0; i < na; i++) {
    const x = <u32>load<u8>(da + i) - 48;
    if (x == 0) continue;
    for (let j: usize = 0; j < nb; j++) {
      const at = cols + ((i + j + 1) << 2);
      store<u32>(at, load<u32>(at) + x * (<u32>load<u8>(db + j) - 48));
    }
  }
  let carry: u32 = 0;
  for (let k = <isize>w - 1; k >= 0; k--) {
    const v = load<u32>(cols + (<usize>k << 2)) + carry;
    carry = v / 10;
    store<u8>(out + <usize>k, <u8>(48 + v % 10));
  }
  return writ_number_from_decimal(sign, out, <u32>w, <i32>exp);
}

/**
 * Exact remainder of two integer descriptors, truncated like Go's big.Int.Rem (the sign of `a`), or
 * 0 when either has more than MAX_DIGITS digits. `b` must be nonzero.
 */
export function decimalRem(a: usize, b: usize): usize {
  const sa = descSign(a);
  if (sa == 0) return writ_number_int(0);
  const ea = <i64>descExp(a);
  const eb = <i64>descExp(b);
  if (ea > MAX_DIGITS || eb > MAX_DIGITS) return 0;
  if (ea < eb) return descToNumber(a, sa);
  // Long division keeping only the remainder: r (eb + 1 digit values) = r * 10 + next digit of a,
  // then subtract b while r >= b. `divisor` holds b's digits right-aligned in eb + 1 slots.
  const w = <usize>eb + 1;
  const r = workBuffer(w << 1);
  const divisor = r + w;
  const nb = <usize>descCount(b);
  const db = descDigits(b);
  for (let j: usize = 0; j < nb; j++) store<u8>(divisor + 1 + j, load<u8>(db + j) - 48);
  const na = <i64>descCount(a);
  const da = descDigits(a);
  for (let k: i64 = 0; k < ea; k++) {
    memory.copy(r, r + 1, w - 1);
    store<u8>(r + w - 1, k < na ? load<u8>(da + <usize>k) - 48 : 0);
    while (memory.compare(r, divisor, w) >= 0) {
      let borrow: i32 = 0;
      for (let i = <isize>w - 1; i >= 0; i--) {
        const v = <i32>load<u8>(r + <usize>i) - <i32>load<u8>(divisor + <usize>i) - borrow;
        borrow = v < 0 ? 1 : 0;
        store<u8>(r + <usize>i, <u8>(v + borrow * 10));
      }
    }
  }
  toAscii(r, w);
  return writ_number_from_decimal(sa, r, <u32>w, <i32>w);
}

/**
 * The integer obtained from the first `k` digits of `d` (its integer part when `k` = exp), with the
 * magnitude incremented by one when `up`: the building block of floor, ceil, round and truncation.
 */
export function decimalIntegerPart(d: usize, k: usize, up: bool): usize {
  const sign = descSign(d);
  if (!up) {
    if (k == 0) return writ_number_int(0);
    return writ_number_from_decimal(sign, descDigits(d), <u32>k, <i32>k);
  }
  // One more slot in front for the carry: "999" + 1 = "1000".
  const buf = workBuffer(k + 1);
  store<u8>(buf, 48);
  memory.copy(buf + 1, descDigits(d), k);
  let i = <isize>k;
  while (load<u8>(buf + <usize>i) == 57) {
    store<u8>(buf + <usize>i, 48);
    i--;
  }
  store<u8>(buf + <usize>i, load<u8>(buf + <usize>i) + 1);
  return writ_number_from_decimal(sign, buf, <u32>(k + 1), <i32>(k + 1));
}
