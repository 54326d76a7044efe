// Type builtins: is_number, is_string, is_boolean, is_array, is_set, is_object, is_null, type_name,
// and the to_number cast.

import { decodeText, scanNumber, numberFromText, writ_number_from_decimal, writ_number_int, writ_number_to_f64 } from "../number";
import { mark, release, malloc } from "../mem";
import {
  FALSE_V,
  OFF_LEN,
  OFF_STR_PTR,
  T_ARRAY,
  T_BOOLEAN,
  T_NULL,
  T_NUMBER,
  T_OBJECT,
  T_SET,
  T_STRING,
  TRUE_V,
  lenOf,
  strPtr,
  tagOf,
} from "../value";

/** true when `v` has type `tag`, false for any other defined value. */
function isOf(v: usize, tag: u32): usize {
  if (v == 0) return 0;
  return tagOf(v) == tag ? TRUE_V : FALSE_V;
}

export function writ_builtin_is_null(v: usize): usize {
  return isOf(v, T_NULL);
}

export function writ_builtin_is_boolean(v: usize): usize {
  return isOf(v, T_BOOLEAN);
}

export function writ_builtin_is_number(v: usize): usize {
  return isOf(v, T_NUMBER);
}

export function writ_builtin_is_string(v: usize): usize {
  return isOf(v, T_STRING);
}

export function writ_builtin_is_array(v: usize): usize {
  return isOf(v, T_ARRAY);
}

export function writ_builtin_is_object(v: usize): usize {
  return isOf(v, T_OBJECT);
}

export function writ_builtin_is_set(v: usize): usize {
  return isOf(v, T_SET);
}

// Type names: "null" "boolean" "number" "string" "array" "object" "set", concatenated, with the offset
// and length of each by type tag (1..7). The result is a static string value filled on each call.
const TYPE_NAME_BYTES: usize = memory.data<u8>([
  110, 117, 108, 108, 98, 111, 111, 108, 101, 97, 110, 110, 117, 109, 98, 101, 114, 115, 116, 114, 105, 110, 103, 97,
  114, 114, 97, 121, 111, 98, 106, 101, 99, 116, 115, 101, 116,
]);
const TYPE_NAME_OFFSETS: usize = memory.data<u8>([0, 0, 4, 11, 17, 23, 28, 34]);
const TYPE_NAME_LENGTHS: usize = memory.data<u8>([0, 4, 7, 6, 6, 5, 6, 3]);
const TYPE_NAME_VALUES: usize = memory.data(16 * 8, 8);

/** type_name(v): "null", "boolean", "number", "string", "array", "object" or "set". */
export function writ_builtin_type_name(v: usize): usize {
  if (v == 0) return 0;
  const t = <usize>tagOf(v);
  const s = TYPE_NAME_VALUES + (t << 4);
  store<u32>(s, T_STRING);
  store<u32>(s, <u32>load<u8>(TYPE_NAME_LENGTHS + t), OFF_LEN);
  store<u32>(s, <u32>(TYPE_NAME_BYTES + <usize>load<u8>(TYPE_NAME_OFFSETS + t)), OFF_STR_PTR);
  return s;
}

@inline
function isDigit(c: u32): bool {
  return c - 48 < 10;
}

// Descriptor for to_number's decoding (see number.ts).
const TO_NUMBER_DESC: usize = memory.data(16, 8);

/**
 * A number from the text of a string, accepting what Go's strconv.ParseFloat does for decimal input:
 * an optional sign, digits with an optional fraction (either side of the point may be empty, not
 * both), an optional exponent. Values beyond the f64 range are rejected (ParseFloat's range error);
 * Inf, NaN and hexadecimal forms are not numbers here. JSON-syntax text is referenced, not copied.
 */
function parseNumberText(p: usize, len: usize): usize {
  if (len == 0) return 0;
  const k = scanNumber(p, len);
  let v: usize = 0;
  if (k >= 0) v = numberFromText(p, len, k == 0);
  else {
    let i: usize = 0;
    if (load<u8>(p) == 43 || load<u8>(p) == 45) i++;
    let mantissa: usize = 0;
    while (i < len && isDigit(load<u8>(p + i))) {
      i++;
      mantissa++;
    }
    if (i < len && load<u8>(p + i) == 46) {
      i++;
      while (i < len && isDigit(load<u8>(p + i))) {
        i++;
        mantissa++;
      }
    }
    if (mantissa == 0) return 0;
    if (i < len && (load<u8>(p + i) | 32) == 101) {
      i++;
      if (i < len && (load<u8>(p + i) == 43 || load<u8>(p + i) == 45)) i++;
      const digitsFrom = i;
      while (i < len && isDigit(load<u8>(p + i))) i++;
      if (i == digitsFrom) return 0;
    }
    if (i != len) return 0;
    // Normalize through the decimal form (the text may have a '+', leading zeros or a bare point).
    const m = mark();
    const digits = malloc(len);
    decodeText(p, len, TO_NUMBER_DESC, digits);
    const sign = load<i32>(TO_NUMBER_DESC);
    const n = load<u32>(TO_NUMBER_DESC, 4);
    const exp = load<i32>(TO_NUMBER_DESC, 8);
    const at = <usize>load<u32>(TO_NUMBER_DESC, 12);
    if (n == 0) {
      release(m);
      return writ_number_int(0);
    }
    v = writ_number_from_decimal(sign, at, n, exp);
  }
  const f = writ_number_to_f64(v);
  return isFinite(f) ? v : 0;
}

/** to_number: numbers as they are, null → 0, booleans → 0/1, strings parsed as decimal numbers. */
export function writ_builtin_to_number(v: usize): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t == T_NUMBER) return v;
  if (t == T_NULL) return writ_number_int(0);
  if (t == T_BOOLEAN) return writ_number_int(load<u8>(v, 1) != 0 ? 1 : 0);
  if (t == T_STRING) return parseNumberText(strPtr(v), lenOf(v));
  return 0;
}
