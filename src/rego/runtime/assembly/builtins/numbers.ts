// Arithmetic builtins: plus, minus (also set difference), mul, div, rem, abs, round, ceil, floor,
// numbers.range and numbers.range_step.
//
// Integers are exact beyond i64, like OPA's big.Int: two i64 ints use i64 arithmetic with overflow
// checks; anything else goes through decimal descriptors (decimal.ts), which are exact for + - * and
// % on any finite decimals with results up to MAX_DIGITS digit positions, and through f64 beyond that
// and for division. Type errors, remainder of non-integers and non-finite results are undefined (0), as
// in OPA's Wasm target; division or remainder by zero aborts evaluation with OPA's eval_builtin_error,
// as OPA's Wasm target does.

import { fail } from "../abort";
import { malloc } from "../mem";
import {
  N_FLOAT,
  N_INT,
  N_REF,
  decodeNumber,
  decodeText,
  numKind,
  numberI64Ok,
  numberToI64,
  writ_number_float,
  writ_number_int,
  writ_number_to_f64,
} from "../number";
import { T_NUMBER, T_SET, elemsOf, lenOf, writ_array, writ_array_append } from "../value";
import { setDifference } from "./sets";
import {
  decimalAdd,
  decimalIntegerPart,
  decimalMul,
  decimalRem,
  descCount,
  descDigits,
  descExp,
  descIsInteger,
  descSign,
  descToNumber,
} from "./decimal";
import { isType } from "./util";

// Descriptors and digit buffers for the two operands. Ints and floats need at most 20 digits; refs
// need as many bytes as their text, on the heap when longer than the static buffers.
const DESC_X: usize = memory.data(16, 8);
const DESC_Y: usize = memory.data(16, 8);
@inline const DIGITS_CAP: u32 = 96;
const DIGITS_X: usize = memory.data(DIGITS_CAP, 8);
const DIGITS_Y: usize = memory.data(DIGITS_CAP, 8);

@inline const I64_MIN: i64 = -9223372036854775808;

// Static int constants (number layout: tag 3, kind 0 at byte 1, i64 at +8).
const ZERO: usize = memory.data<u32>([3, 0, 0, 0], 8);
const ONE: usize = memory.data<u32>([3, 0, 1, 0], 8);

@inline
function isNumber(v: usize): bool {
  return isType(v, T_NUMBER);
}

@inline
function intOf(v: usize): i64 {
  return load<i64>(v, 8);
}

/** Decodes number `v` into descriptor `desc`, its digits into `digits` (DIGITS_CAP bytes) if they fit. */
function decode(v: usize, desc: usize, digits: usize): void {
  if (numKind(v) == N_REF) {
    const len = load<u32>(v, 4);
    decodeText(<usize>load<u32>(v, 8), len, desc, len <= DIGITS_CAP ? digits : malloc(len));
  } else decodeNumber(v, desc, digits);
}

/** A float result, or undefined when it is not finite. */
function finiteFloat(f: f64): usize {
  return isFinite(f) ? writ_number_float(f) : 0;
}

// ---------------------------------------------------------------------------------------------
// Binary operations on two number values (also used by sum and product)

@inline const OP_ADD: i32 = 0;
@inline const OP_SUB: i32 = 1;
@inline const OP_MUL: i32 = 2;

/** `x op y` for two number values, exactly where possible; 0 when not finite. */
export function arith(x: usize, y: usize, op: i32): usize {
  if (numKind(x) == N_INT && numKind(y) == N_INT) {
    const a = intOf(x);
    const b = intOf(y);
    if (op == OP_ADD) {
      const r = a + b;
      if (((a ^ r) & (b ^ r)) >= 0) return writ_number_int(r);
    } else if (op == OP_SUB) {
      const r = a - b;
      if (((a ^ b) & (a ^ r)) >= 0) return writ_number_int(r);
    } else {
      const small: i64 = 0x7fff_ffff;
      if ((a <= small && a >= -small && b <= small && b >= -small) || a == 0) return writ_number_int(a * b);
      const r = a * b;
      if (!(a == -1 && b == I64_MIN) && r / a == b) return writ_number_int(r);
    }
  }
  decode(x, DESC_X, DIGITS_X);
  decode(y, DESC_Y, DIGITS_Y);
  const exact = op == OP_MUL ? decimalMul(DESC_X, DESC_Y) : decimalAdd(DESC_X, DESC_Y, op == OP_SUB);
  if (exact != 0) return exact;
  const a = writ_number_to_f64(x);
  const b = writ_number_to_f64(y);
  return finiteFloat(op == OP_ADD ? a + b : op == OP_SUB ? a - b : a * b);
}

export function writ_builtin_plus(x: usize, y: usize): usize {
  if (!isNumber(x) || !isNumber(y)) return 0;
  return arith(x, y, OP_ADD);
}

/** `x - y` on numbers; on two sets, the set difference. */
export function writ_builtin_minus(x: usize, y: usize): usize {
  if (isNumber(x) && isNumber(y)) return arith(x, y, OP_SUB);
  if (isType(x, T_SET) && isType(y, T_SET)) return setDifference(x, y);
  return 0;
}

export function writ_builtin_mul(x: usize, y: usize): usize {
  if (!isNumber(x) || !isNumber(y)) return 0;
  return arith(x, y, OP_MUL);
}

/** `x / y`: an int when both are ints and the division is exact, else a float. Zero divisor: undefined. */
export function writ_builtin_div(x: usize, y: usize): usize {
  if (!isNumber(x) || !isNumber(y)) return 0;
  if (numKind(x) == N_INT && numKind(y) == N_INT) {
    const a = intOf(x);
    const b = intOf(y);
    if (b == 0) fail("eval_builtin_error: div: divide by zero");
    if (b == -1) return a != I64_MIN ? writ_number_int(-a) : arith(ZERO, x, OP_SUB);
    if (a % b == 0) return writ_number_int(a / b);
    return finiteFloat(<f64>a / <f64>b);
  }
  const b = writ_number_to_f64(y);
  if (b == 0) fail("eval_builtin_error: div: divide by zero");
  return finiteFloat(writ_number_to_f64(x) / b);
}

/** `x % y` on integers (any size), with the sign of `x`. Non-integers and a zero divisor: undefined. */
export function writ_builtin_rem(x: usize, y: usize): usize {
  if (!isNumber(x) || !isNumber(y)) return 0;
  const a = numberToI64(x);
  const aOk = numberI64Ok();
  const b = numberToI64(y);
  if (aOk && numberI64Ok()) {
    if (b == 0) fail("eval_builtin_error: rem: modulo by zero");
    if (b == -1) return writ_number_int(0);
    return writ_number_int(a % b);
  }
  decode(x, DESC_X, DIGITS_X);
  decode(y, DESC_Y, DIGITS_Y);
  if (!descIsInteger(DESC_X) || !descIsInteger(DESC_Y)) return 0;
  if (descSign(DESC_Y) == 0) fail("eval_builtin_error: rem: modulo by zero");
  return decimalRem(DESC_X, DESC_Y);
}

// ---------------------------------------------------------------------------------------------
// Unary operations

export function writ_builtin_abs(x: usize): usize {
  if (!isNumber(x)) return 0;
  const k = numKind(x);
  if (k == N_INT) {
    const a = intOf(x);
    if (a >= 0) return x;
    if (a != I64_MIN) return writ_number_int(-a);
  } else if (k == N_FLOAT) {
    const f = load<f64>(x, 8);
    return f < 0 ? writ_number_float(-f) : x;
  }
  decode(x, DESC_X, DIGITS_X);
  return descToNumber(DESC_X, 1);
}

@inline const ROUND: i32 = 0;
@inline const CEIL: i32 = 1;
@inline const FLOOR: i32 = 2;

/** round (half away from zero), ceil or floor of a number, exact on its decimal digits. */
function toIntegral(x: usize, mode: i32): usize {
  if (!isNumber(x)) return 0;
  if (numKind(x) == N_INT) return x;
  decode(x, DESC_X, DIGITS_X);
  const sign = descSign(DESC_X);
  const exp = descExp(DESC_X);
  // Integral values come back canonical (a ref such as 10.00 becomes the int 10).
  if (descIsInteger(DESC_X)) return descToNumber(DESC_X, sign);
  const k: usize = exp > 0 ? <usize>exp : 0; // digits before the decimal point
  let up: bool;
  if (mode == CEIL) up = sign > 0;
  else if (mode == FLOOR) up = sign < 0;
  else up = exp >= 0 && load<u8>(descDigits(DESC_X) + k) >= 53; // next digit >= '5'
  return decimalIntegerPart(DESC_X, k, up);
}

export function writ_builtin_round(x: usize): usize {
  return toIntegral(x, ROUND);
}

export function writ_builtin_ceil(x: usize): usize {
  return toIntegral(x, CEIL);
}

export function writ_builtin_floor(x: usize): usize {
  return toIntegral(x, FLOOR);
}

/** Integer part (truncated toward zero) of a number as a descriptor in DESC_X; for format_int. */
export function truncatedDescriptor(x: usize): usize {
  decode(x, DESC_X, DIGITS_X);
  const exp = descExp(DESC_X);
  if (descSign(DESC_X) == 0 || exp <= 0) {
    store<i32>(DESC_X, 0);
    store<u32>(DESC_X, 0, 4);
    store<i32>(DESC_X, 0, 8);
  } else if (<u32>exp < descCount(DESC_X)) {
    store<u32>(DESC_X, <u32>exp, 4);
  }
  return DESC_X;
}

// ---------------------------------------------------------------------------------------------
// Ranges

@inline const MAX_RANGE: u64 = 0x0800_0000;

/** [a, a ± step, ...] up to and including b (descending when a > b). */
function range(x: usize, y: usize, stepValue: usize): usize {
  if (!isNumber(x) || !isNumber(y) || !isNumber(stepValue)) return 0;
  const a = numberToI64(x);
  if (!numberI64Ok()) return 0;
  const b = numberToI64(y);
  if (!numberI64Ok()) return 0;
  const step = numberToI64(stepValue);
  if (!numberI64Ok() || step <= 0) return 0;
  const span: u64 = a <= b ? <u64>b - <u64>a : <u64>a - <u64>b;
  const count = span / <u64>step + 1;
  if (count > MAX_RANGE) fail("out of memory");
  const arr = writ_array(<u32>count);
  let v = a;
  for (let i: u64 = 0; i < count; i++) {
    writ_array_append(arr, writ_number_int(v));
    v = a <= b ? v + step : v - step;
  }
  return arr;
}


export function writ_builtin_numbers_range(a: usize, b: usize): usize {
  return range(a, b, ONE);
}

export function writ_builtin_numbers_range_step(a: usize, b: usize, step: usize): usize {
  return range(a, b, step);
}

// ---------------------------------------------------------------------------------------------
// Aggregates over numbers

/** sum (OP_ADD from 0) or product (OP_MUL from 1) of an array or set of numbers. */
export function accumulate(c: usize, op: i32): usize {
  const n = lenOf(c);
  const items = elemsOf(c);
  let acc: i64 = op == OP_MUL ? 1 : 0;
  let i: u32 = 0;
  // Fast path over ints while the result fits an i64.
  for (; i < n; i++) {
    const e = <usize>load<u32>(items + (<usize>i << 2));
    if (!isNumber(e)) return 0;
    if (numKind(e) != N_INT) break;
    const x = intOf(e);
    if (op == OP_ADD) {
      const r = acc + x;
      if (((acc ^ r) & (x ^ r)) < 0) break;
      acc = r;
    } else {
      const r = acc * x;
      if (acc != 0 && ((acc == -1 && x == I64_MIN) || r / acc != x)) break;
      acc = r;
    }
  }
  if (i == n) return writ_number_int(acc);
  let total = writ_number_int(acc);
  for (; i < n; i++) {
    const e = <usize>load<u32>(items + (<usize>i << 2));
    if (!isNumber(e)) return 0;
    total = arith(total, e, op);
    if (total == 0) return 0;
  }
  return total;
}

export function sumOf(c: usize): usize {
  return accumulate(c, OP_ADD);
}

export function productOf(c: usize): usize {
  return accumulate(c, OP_MUL);
}
