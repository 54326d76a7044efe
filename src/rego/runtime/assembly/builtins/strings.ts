// String builtins, following OPA's Go implementations: byte-wise matching, code point (rune) indexes,
// Go's UTF-8 decoding (an invalid byte is one U+FFFD rune) and Unicode simple case mapping.
// Results that are parts of an argument share its bytes (strings are immutable); a builtin that
// changes nothing returns its argument.

import { fail } from "../abort";
import { N_INT, numKind, numberI64Ok, numberToI64, u64Digits, writ_number_int } from "../number";
import { putUtf8 } from "../json";
import { calloc } from "../mem";
import {
  FALSE_V,
  T_ARRAY,
  T_NUMBER,
  T_OBJECT,
  T_SET,
  T_STRING,
  TRUE_V,
  elemsOf,
  lenOf,
  strPtr,
  tagOf,
  writ_array,
  writ_array_append,
} from "../value";
import { CASE_STRIDE2, LOWER_RUNS, LOWER_RUNS_COUNT, UPPER_RUNS, UPPER_RUNS_COUNT } from "./case-table";
import { MAX_DIGITS, descCount, descDigits, descExp, descSign } from "./decimal";
import { truncatedDescriptor } from "./numbers";
import {
  EMPTY_STRING,
  decodeRune,
  hasPrefix,
  hasSuffix,
  indexOfBytes,
  isType,
  runeCount,
  runeStep,
  runeWidth,
  stringAlloc,
  stringBytes,
  stringFinish,
  stringSlice,
} from "./util";

@inline
function isString(v: usize): bool {
  return isType(v, T_STRING);
}

@inline
function elemAt(c: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(c) + (<usize>i << 2));
}

@inline
function boolValue(b: bool): usize {
  return b ? TRUE_V : FALSE_V;
}

/** The substring [from, to) of string value `s` as a new value sharing its bytes (or `s` itself). */
function slice(s: usize, from: usize, to: usize): usize {
  if (from == 0 && to == <usize>lenOf(s)) return s;
  if (from >= to) return EMPTY_STRING;
  return stringSlice(strPtr(s) + from, to - from);
}

// ---------------------------------------------------------------------------------------------
// Joining and testing

/** concat(delimiter, array or set of strings). */
export function writ_builtin_concat(delim: usize, c: usize): usize {
  if (!isString(delim) || c == 0) return 0;
  const t = tagOf(c);
  if (t != T_ARRAY && t != T_SET) return 0;
  const n = lenOf(c);
  if (n == 0) return EMPTY_STRING;
  let total: usize = 0;
  for (let i: u32 = 0; i < n; i++) {
    const e = elemAt(c, i);
    if (!isString(e)) return 0;
    total += lenOf(e);
  }
  if (n == 1) return elemAt(c, 0);
  const dlen = <usize>lenOf(delim);
  total += dlen * <usize>(n - 1);
  const r = stringAlloc(total);
  let out = stringBytes(r);
  for (let i: u32 = 0; i < n; i++) {
    if (i > 0) {
      memory.copy(out, strPtr(delim), dlen);
      out += dlen;
    }
    const e = elemAt(c, i);
    memory.copy(out, strPtr(e), lenOf(e));
    out += lenOf(e);
  }
  return stringFinish(r, total);
}

export function writ_builtin_contains(s: usize, sub: usize): usize {
  if (!isString(s) || !isString(sub)) return 0;
  return boolValue(indexOfBytes(strPtr(s), lenOf(s), 0, strPtr(sub), lenOf(sub)) >= 0);
}

export function writ_builtin_startswith(s: usize, prefix: usize): usize {
  if (!isString(s) || !isString(prefix)) return 0;
  return boolValue(hasPrefix(s, prefix));
}

export function writ_builtin_endswith(s: usize, suffix: usize): usize {
  if (!isString(s) || !isString(suffix)) return 0;
  return boolValue(hasSuffix(s, suffix));
}

/** Number of strings in a string-or-collection argument, or -1 unless it is a string or an array/set of strings. */
function stringItemCount(v: usize): i32 {
  if (v == 0) return -1;
  const t = tagOf(v);
  if (t == T_STRING) return 1;
  if (t != T_ARRAY && t != T_SET) return -1;
  const n = lenOf(v);
  for (let i: u32 = 0; i < n; i++) if (!isString(elemAt(v, i))) return -1;
  return <i32>n;
}

@inline
function stringItem(v: usize, i: u32): usize {
  return tagOf(v) == T_STRING ? v : elemAt(v, i);
}

/** Whether any string of `a` starts (or ends, when `suffix`) with any string of `b`. */
function anyAffixMatch(a: usize, b: usize, suffix: bool): usize {
  const na = stringItemCount(a);
  const nb = stringItemCount(b);
  if (na < 0 || nb < 0) return 0;
  for (let i: u32 = 0; i < <u32>na; i++) {
    const s = stringItem(a, i);
    for (let j: u32 = 0; j < <u32>nb; j++) {
      const x = stringItem(b, j);
      if (suffix ? hasSuffix(s, x) : hasPrefix(s, x)) return TRUE_V;
    }
  }
  return FALSE_V;
}

export function writ_builtin_strings_any_prefix_match(a: usize, b: usize): usize {
  return anyAffixMatch(a, b, false);
}

export function writ_builtin_strings_any_suffix_match(a: usize, b: usize): usize {
  return anyAffixMatch(a, b, true);
}

// ---------------------------------------------------------------------------------------------
// Case mapping

/** Simple case mapping of a code point through a table of runs (see case-table.ts). */
function mapRune(cp: u32, runs: usize, count: u32): u32 {
  let lo: i32 = 0;
  let hi: i32 = <i32>count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = runs + <usize>mid * 12;
    const first = load<u32>(at);
    const lastAndFlag = load<u32>(at, 4);
    const last = lastAndFlag & ~CASE_STRIDE2;
    if (cp < first) hi = mid - 1;
    else if (cp > last) lo = mid + 1;
    else {
      if ((lastAndFlag & CASE_STRIDE2) != 0 && ((cp - first) & 1) != 0) return cp;
      return cp + load<u32>(at, 8);
    }
  }
  return cp;
}

@inline
function mapCase(cp: u32, upper: bool): u32 {
  if (cp < 0x80) {
    if (upper) return cp - 97 < 26 ? cp - 32 : cp;
    return cp - 65 < 26 ? cp + 32 : cp;
  }
  return upper ? mapRune(cp, UPPER_RUNS, UPPER_RUNS_COUNT) : mapRune(cp, LOWER_RUNS, LOWER_RUNS_COUNT);
}

/** strings.ToUpper / strings.ToLower: per code point; invalid UTF-8 bytes become U+FFFD. */
function changeCase(s: usize, upper: bool): usize {
  if (!isString(s)) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const end = p + len;
  // Nothing to change: return the argument without allocating.
  let q = p;
  while (q < end) {
    const cp = decodeRune(q, end);
    if ((cp == 0xfffd && runeWidth == 1) || mapCase(cp, upper) != cp) break;
    q += runeWidth;
  }
  if (q == end) return s;
  // A mapped code point is at most one UTF-8 byte longer; an invalid byte becomes three.
  const r = stringAlloc(len * 3);
  let out = stringBytes(r);
  memory.copy(out, p, q - p);
  out += q - p;
  while (q < end) {
    const cp = decodeRune(q, end);
    q += runeWidth;
    out += putUtf8(out, mapCase(cp, upper));
  }
  return stringFinish(r, out - stringBytes(r));
}

export function writ_builtin_upper(s: usize): usize {
  return changeCase(s, true);
}

export function writ_builtin_lower(s: usize): usize {
  return changeCase(s, false);
}

// ---------------------------------------------------------------------------------------------
// Splitting

/**
 * Number of parts Go's strings.Split gives: occurrences + 1, or for an empty delimiter one part per
 * UTF-8 sequence (none for the empty string).
 */
function splitCount(s: usize, d: usize): u32 {
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const dlen = <usize>lenOf(d);
  if (dlen == 0) return runeCount(p, len);
  let n: u32 = 1;
  let at = indexOfBytes(p, len, 0, strPtr(d), dlen);
  while (at >= 0) {
    n++;
    at = indexOfBytes(p, len, <usize>at + dlen, strPtr(d), dlen);
  }
  return n;
}

/** Parts [skip, skip + take) of splitting `s` by `d` (as Go's strings.Split), as an array. */
function splitParts(s: usize, d: usize, skip: u32, take: u32): usize {
  const r = writ_array(take);
  if (take == 0) return r;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const end = p + len;
  const dlen = <usize>lenOf(d);
  let start: usize = 0;
  let index: u32 = 0;
  const stop = skip + take;
  while (index < stop) {
    let partEnd: usize;
    let next: usize;
    if (dlen == 0) {
      partEnd = start + runeStep(p + start, end);
      next = partEnd;
    } else {
      const at = indexOfBytes(p, len, start, strPtr(d), dlen);
      partEnd = at < 0 ? len : <usize>at;
      next = partEnd + dlen;
    }
    if (index >= skip) writ_array_append(r, slice(s, start, partEnd));
    start = next;
    index++;
  }
  return r;
}

export function writ_builtin_split(s: usize, d: usize): usize {
  if (!isString(s) || !isString(d)) return 0;
  return splitParts(s, d, 0, splitCount(s, d));
}

/**
 * strings.split_n(s, delimiter, n): the first n parts of the split for n > 0, the last -n parts for
 * n < 0, no parts for 0 (n must be an integer).
 */
export function writ_builtin_strings_split_n(s: usize, d: usize, nValue: usize): usize {
  if (!isString(s) || !isString(d) || !isType(nValue, T_NUMBER)) return 0;
  const n = numberToI64(nValue);
  if (!numberI64Ok()) return 0;
  const total = splitCount(s, d);
  if (n >= 0) return splitParts(s, d, 0, n < <i64>total ? <u32>n : total);
  const take: u32 = -n < <i64>total ? <u32>-n : total;
  return splitParts(s, d, total - take, take);
}

// ---------------------------------------------------------------------------------------------
// Replacing

// Go's strings.NewReplacer semantics for a list of (old, new) pairs: scanning left to right, at each
// byte position the first pair (in list order) whose old string matches there is replaced and the scan
// continues after it; an empty old string matches at every position, but not twice in a row at the
// same one. `pairs` points at `count` (old, new) string value pointers.

/** Index of the first pair matching at byte `i` of `s`, or -1. */
function matchPair(p: usize, len: usize, i: usize, pairs: usize, count: u32, skipEmpty: bool): i32 {
  for (let k: u32 = 0; k < count; k++) {
    const old = <usize>load<u32>(pairs + (<usize>k << 3));
    const n = <usize>lenOf(old);
    if (n == 0) {
      if (!skipEmpty) return <i32>k;
    } else if (n <= len - i && memory.compare(p + i, strPtr(old), n) == 0) return <i32>k;
  }
  return -1;
}

/** Runs the replacer over `s`; writes the output at `out` unless it is 0. Returns the output length. */
function runReplacer(s: usize, pairs: usize, count: u32, out: usize): usize {
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  let written: usize = 0;
  let last: usize = 0;
  let prevEmpty = false;
  let i: usize = 0;
  while (i <= len) {
    const k = matchPair(p, len, i, pairs, count, prevEmpty);
    if (k < 0) {
      prevEmpty = false;
      i++;
      continue;
    }
    const old = <usize>load<u32>(pairs + (<usize>k << 3));
    const repl = <usize>load<u32>(pairs + (<usize>k << 3), 4);
    const rlen = <usize>lenOf(repl);
    if (out != 0) {
      memory.copy(out + written, p + last, i - last);
      memory.copy(out + written + i - last, strPtr(repl), rlen);
    }
    written += i - last + rlen;
    prevEmpty = lenOf(old) == 0;
    i += lenOf(old);
    last = i;
  }
  if (out != 0) memory.copy(out + written, p + last, len - last);
  return written + len - last;
}

/** `s` with the replacements applied, or `s` itself when none matched. */
function replaceAll(s: usize, pairs: usize, count: u32): usize {
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  // A pass that only measures; nothing matching means nothing to allocate.
  let any = false;
  let prevEmpty = false;
  for (let i: usize = 0; i <= len && !any; i++) any = matchPair(p, len, i, pairs, count, prevEmpty) >= 0;
  if (!any) return s;
  const total = runReplacer(s, pairs, count, 0);
  const r = stringAlloc(total);
  runReplacer(s, pairs, count, stringBytes(r));
  return stringFinish(r, total);
}

const ONE_PAIR: usize = memory.data(8, 8);

export function writ_builtin_replace(s: usize, old: usize, repl: usize): usize {
  if (!isString(s) || !isString(old) || !isString(repl)) return 0;
  store<u32>(ONE_PAIR, <u32>old);
  store<u32>(ONE_PAIR, <u32>repl, 4);
  return replaceAll(s, ONE_PAIR, 1);
}

/**
 * strings.replace_n(patterns, s): every key of the object `patterns` replaced by its value, keys taking
 * precedence in sorted order. Keys and values must be strings.
 */
export function writ_builtin_strings_replace_n(patterns: usize, s: usize): usize {
  if (!isType(patterns, T_OBJECT) || !isString(s)) return 0;
  const n = lenOf(patterns);
  const pairs = elemsOf(patterns); // (key, value) pairs, sorted by key: the layout replaceAll reads
  for (let i: u32 = 0; i < n; i++) {
    const at = pairs + (<usize>i << 3);
    if (!isString(<usize>load<u32>(at)) || !isString(<usize>load<u32>(at, 4))) return 0;
  }
  return replaceAll(s, pairs, n);
}

// ---------------------------------------------------------------------------------------------
// Substrings and searching (indexes count code points)

/** Byte offset of code point index `index` in `s` (the length when past the end). */
function runeOffset(p: usize, len: usize, index: i64): usize {
  const end = p + len;
  let q = p;
  for (let i: i64 = 0; i < index && q < end; i++) q += runeStep(q, end);
  return q - p;
}

/** substring(s, start, length): code points; a negative length means to the end. */
export function writ_builtin_substring(s: usize, startValue: usize, lengthValue: usize): usize {
  if (!isString(s) || !isType(startValue, T_NUMBER) || !isType(lengthValue, T_NUMBER)) return 0;
  const start = numberToI64(startValue);
  if (!numberI64Ok()) return 0;
  if (start < 0) fail("eval_builtin_error: substring: negative offset");
  const length = numberToI64(lengthValue);
  if (!numberI64Ok()) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const from = runeOffset(p, len, start);
  if (from >= len) return EMPTY_STRING;
  if (length < 0) return slice(s, from, len);
  return slice(s, from, from + runeOffset(p + from, len - from, length));
}

/** Code point index of the first occurrence of `search` in `s`, or -1; undefined for an empty search. */
export function writ_builtin_indexof(s: usize, search: usize): usize {
  if (!isString(s) || !isString(search) || lenOf(search) == 0) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const n = <usize>lenOf(search);
  const end = p + len;
  let index: i64 = 0;
  for (let q = p; q + n <= end; q += runeStep(q, end)) {
    if (memory.compare(q, strPtr(search), n) == 0) return writ_number_int(index);
    index++;
  }
  return writ_number_int(-1);
}

/** Code point indexes of all (possibly overlapping) occurrences of `search` in `s`. */
export function writ_builtin_indexof_n(s: usize, search: usize): usize {
  if (!isString(s) || !isString(search) || lenOf(search) == 0) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const n = <usize>lenOf(search);
  const end = p + len;
  const r = writ_array(0);
  let index: i64 = 0;
  for (let q = p; q + n <= end; q += runeStep(q, end)) {
    if (memory.compare(q, strPtr(search), n) == 0) writ_array_append(r, writ_number_int(index));
    index++;
  }
  return r;
}

/** strings.count(s, sub): non-overlapping occurrences; code points + 1 for an empty `sub`. */
export function writ_builtin_strings_count(s: usize, sub: usize): usize {
  if (!isString(s) || !isString(sub)) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  const n = <usize>lenOf(sub);
  if (n == 0) return writ_number_int(<i64>runeCount(p, len) + 1);
  let count: i64 = 0;
  let at = indexOfBytes(p, len, 0, strPtr(sub), n);
  while (at >= 0) {
    count++;
    at = indexOfBytes(p, len, <usize>at + n, strPtr(sub), n);
  }
  return writ_number_int(count);
}

/** The code points of `s` in reverse order (an invalid byte stays one unit). */
export function writ_builtin_strings_reverse(s: usize): usize {
  if (!isString(s)) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  if (len <= 1) return s;
  const end = p + len;
  const r = stringAlloc(len);
  let out = stringBytes(r) + len;
  for (let q = p; q < end; ) {
    const w = runeStep(q, end);
    out -= w;
    memory.copy(out, q, w);
    q += w;
  }
  return stringFinish(r, len);
}

// ---------------------------------------------------------------------------------------------
// Trimming

/** Width of the code point decoded by decodeLastRune. */
let lastRuneWidth: usize = 0;

/**
 * Decodes the code point ending at `end` (> start) like Go's utf8.DecodeLastRune: an invalid sequence
 * is U+FFFD of width 1. The width is left in `lastRuneWidth`.
 */
function decodeLastRune(start: usize, end: usize): u32 {
  let q = end - 1;
  const last = <u32>load<u8>(q);
  if (last < 0x80) {
    lastRuneWidth = 1;
    return last;
  }
  const limit = end - start > 4 ? end - 4 : start;
  while (q > limit && (load<u8>(q) & 0xc0) == 0x80) q--;
  const cp = decodeRune(q, end);
  if (q + runeWidth != end || (cp == 0xfffd && runeWidth == 1)) {
    lastRuneWidth = 1;
    return 0xfffd;
  }
  lastRuneWidth = runeWidth;
  return cp;
}

/** 1 if code point `cp` occurs in the cutset string `cut`. */
function inCutset(cp: u32, cut: usize): bool {
  const p = strPtr(cut);
  const end = p + lenOf(cut);
  for (let q = p; q < end; ) {
    if (decodeRune(q, end) == cp) return true;
    q += runeWidth;
  }
  return false;
}

@inline const TRIM_LEFT: i32 = 1;
@inline const TRIM_RIGHT: i32 = 2;

/** Go's strings.Trim/TrimLeft/TrimRight: drops leading/trailing code points found in `cut`. */
function trimCutset(s: usize, cut: usize, sides: i32): usize {
  if (!isString(s) || !isString(cut)) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  if (len == 0 || lenOf(cut) == 0) return s;
  let from: usize = 0;
  let to = len;
  if ((sides & TRIM_LEFT) != 0) {
    while (from < to) {
      const cp = decodeRune(p + from, p + to);
      if (!inCutset(cp, cut)) break;
      from += runeWidth;
    }
  }
  if ((sides & TRIM_RIGHT) != 0) {
    while (to > from) {
      const cp = decodeLastRune(p + from, p + to);
      const w = lastRuneWidth;
      if (!inCutset(cp, cut)) break;
      to -= w;
    }
  }
  return slice(s, from, to);
}

export function writ_builtin_trim(s: usize, cut: usize): usize {
  return trimCutset(s, cut, TRIM_LEFT | TRIM_RIGHT);
}

export function writ_builtin_trim_left(s: usize, cut: usize): usize {
  return trimCutset(s, cut, TRIM_LEFT);
}

export function writ_builtin_trim_right(s: usize, cut: usize): usize {
  return trimCutset(s, cut, TRIM_RIGHT);
}

export function writ_builtin_trim_prefix(s: usize, prefix: usize): usize {
  if (!isString(s) || !isString(prefix)) return 0;
  return hasPrefix(s, prefix) ? slice(s, lenOf(prefix), lenOf(s)) : s;
}

export function writ_builtin_trim_suffix(s: usize, suffix: usize): usize {
  if (!isString(s) || !isString(suffix)) return 0;
  return hasSuffix(s, suffix) ? slice(s, 0, lenOf(s) - lenOf(suffix)) : s;
}

/** Go's unicode.IsSpace. */
function isSpace(cp: u32): bool {
  if (cp < 0x80) return cp == 32 || cp - 9 < 5;
  if (cp == 0x85 || cp == 0xa0 || cp == 0x1680) return true;
  if (cp >= 0x2000 && cp <= 0x200a) return true;
  return cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/** trim_space: drops leading and trailing Unicode white space. */
export function writ_builtin_trim_space(s: usize): usize {
  if (!isString(s)) return 0;
  const p = strPtr(s);
  let from: usize = 0;
  let to = <usize>lenOf(s);
  while (from < to) {
    const cp = decodeRune(p + from, p + to);
    if (!isSpace(cp)) break;
    from += runeWidth;
  }
  while (to > from) {
    const cp = decodeLastRune(p + from, p + to);
    const w = lastRuneWidth;
    if (!isSpace(cp)) break;
    to -= w;
  }
  return slice(s, from, to);
}

// ---------------------------------------------------------------------------------------------
// format_int

const HEX_DIGITS: usize = memory.data<u8>([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/**
 * format_int(number, base): the integer part (truncated toward zero) in base 2, 8, 10 or 16, with
 * lowercase hex digits and a leading "-" for negative values. Undefined beyond 10^2048.
 */
export function writ_builtin_format_int(x: usize, baseValue: usize): usize {
  if (!isType(x, T_NUMBER) || !isType(baseValue, T_NUMBER)) return 0;
  const base = numberToI64(baseValue);
  if (!numberI64Ok() || (base != 2 && base != 8 && base != 10 && base != 16)) return 0;
  let negative = false;
  let magnitude: u64 = 0;
  let fits = true;
  if (numKind(x) == N_INT) {
    const i = load<i64>(x, 8);
    negative = i < 0;
    magnitude = negative ? 0 - <u64>i : <u64>i;
  } else {
    const d = truncatedDescriptor(x);
    negative = descSign(d) < 0;
    const n = descCount(d);
    const exp = descExp(d);
    const digits = descDigits(d);
    if (<i64>exp > MAX_DIGITS) return 0;
    if (exp > 19) fits = false;
    for (let i: i32 = 0; fits && i < exp; i++) {
      const digit = i < <i32>n ? <u64>(load<u8>(digits + <usize>i) - 48) : 0;
      if (magnitude > 1844674407370955161 || (magnitude == 1844674407370955161 && digit > 5)) fits = false;
      else magnitude = magnitude * 10 + digit;
    }
    if (!fits) return formatBigInt(d, <u32>base);
  }
  // At most 64 binary digits and a sign.
  const r = stringAlloc(65);
  const out = stringBytes(r);
  let len: usize = 0;
  if (negative && magnitude != 0) store<u8>(out, 45);
  const signLen: usize = negative && magnitude != 0 ? 1 : 0;
  if (base == 10) len = signLen + u64Digits(magnitude, out + signLen);
  else {
    const shift: u64 = base == 2 ? 1 : base == 8 ? 3 : 4;
    const mask: u64 = <u64>base - 1;
    let digits: usize = 1;
    for (let t = magnitude >> shift; t != 0; t >>= shift) digits++;
    for (let k: usize = 0; k < digits; k++) {
      store<u8>(out + signLen + digits - 1 - k, load<u8>(HEX_DIGITS + <usize>(magnitude & mask)));
      magnitude >>= shift;
    }
    len = signLen + digits;
  }
  return stringFinish(r, len);
}

/** format_int for integers beyond u64: repeated division of the decimal digits by the base. */
function formatBigInt(d: usize, base: u32): usize {
  const n = <usize>descCount(d);
  const k = <usize>descExp(d); // integer digits, the last (k - n) of them zeros
  const negative = descSign(d) < 0;
  // Digit values, most significant first.
  const work = calloc(k);
  const digits = descDigits(d);
  for (let i: usize = 0; i < n && i < k; i++) store<u8>(work + i, load<u8>(digits + i) - 48);
  // Each base digit needs at most log2(10) < 4 bits per decimal digit: 4 * k output digits suffice.
  const maxLen = 4 * k + 1;
  const r = stringAlloc(maxLen);
  const out = stringBytes(r);
  let pos = maxLen;
  let first: usize = 0; // index of the first nonzero digit of the dividend
  while (first < k) {
    let rem: u32 = 0;
    for (let i = first; i < k; i++) {
      const v = rem * 10 + <u32>load<u8>(work + i);
      store<u8>(work + i, <u8>(v / base));
      rem = v % base;
    }
    store<u8>(out + --pos, load<u8>(HEX_DIGITS + rem));
    while (first < k && load<u8>(work + first) == 0) first++;
  }
  if (negative) store<u8>(out + --pos, 45);
  const len = maxLen - pos;
  memory.copy(out, out + pos, len);
  return stringFinish(r, len);
}
