// JSON (and Rego value syntax) parsing and serialization.
//
// Parsing is strict RFC 8259 JSON (plus `{a, b}` / `set()` set literals and non-string object keys in
// value mode). Strings without escapes and numbers are NOT copied: their values point into the text,
// which therefore has to stay in place as long as the values are used (true for every SDK flow: input
// and data text sit below the heap pointer, and opa_free only ever reclaims the most recent block).
// Returns 0 on any syntax error, invalid UTF-8 or nesting deeper than MAX_DEPTH.
//
// Serialization writes straight into the free space above the heap pointer, growing memory as
// needed, then claims the bytes as one allocation. It never allocates while writing.

import { fail } from "./abort";
import { commit, freeStart, malloc, mark, release, reserve, shrink } from "./mem";
import { FLOAT_TEXT_MAX, N_FLOAT, N_INT, formatFloat, formatInt, numKind, numberFromText, scanNumber } from "./number";
import {
  FALSE_V,
  NULL_V,
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
  appendElem,
  appendEntry,
  compare,
  compareStrings,
  elemsOf,
  finishObject,
  finishSet,
  lenOf,
  strPtr,
  tagOf,
  writ_array,
  writ_array_append,
  writ_object,
  writ_set,
} from "./value";

@inline const MAX_DEPTH: u32 = 1000;

let pCur: usize = 0;
let pEnd: usize = 0;
let pSets: bool = false;
let pDepth: u32 = 0;

function parseTop(ptr: usize, len: usize, sets: bool): usize {
  pCur = ptr;
  pEnd = ptr + len;
  pSets = sets;
  pDepth = 0;
  const m = mark();
  let v = parseValue();
  if (v != 0) {
    skipWs();
    if (pCur != pEnd) v = 0;
  }
  if (v == 0) release(m);
  return v;
}

/** Parses `len` bytes of JSON at `ptr`. Returns the value, or 0 if the text is not valid JSON. */
export function opa_json_parse(ptr: usize, len: usize): usize {
  return parseTop(ptr, len, false);
}

/** Like opa_json_parse, plus Rego set literals (`{1, 2}`, `set()`) and non-string object keys. */
export function opa_value_parse(ptr: usize, len: usize): usize {
  return parseTop(ptr, len, true);
}

@inline
function skipWs(): void {
  let p = pCur;
  const end = pEnd;
  while (p < end) {
    const c = load<u8>(p);
    if (c != 32 && c != 10 && c != 13 && c != 9) break;
    p++;
  }
  pCur = p;
}

function matchWord(word: u64, n: usize): bool {
  if (pEnd - pCur < n) return false;
  for (let i: usize = 0; i < n; i++) {
    if (<u64>load<u8>(pCur + i) != ((word >> (i << 3)) & 0xff)) return false;
  }
  pCur += n;
  return true;
}

function parseValue(): usize {
  skipWs();
  if (pCur >= pEnd) return 0;
  const c = <u32>load<u8>(pCur);
  if (c == 34) return parseString();
  if (c == 123) return parseBrace();
  if (c == 91) return parseArray();
  if (c == 45 || c - 48 < 10) return parseNumber();
  if (c == 116) return matchWord(0x65757274, 4) ? TRUE_V : 0; // "true"
  if (c == 102) return matchWord(0x65736c6166, 5) ? FALSE_V : 0; // "false"
  if (c == 110) return matchWord(0x6c6c756e, 4) ? NULL_V : 0; // "null"
  if (c == 115 && pSets && matchWord(0x28746573, 4)) {
    // "set(" ws ")"
    skipWs();
    if (pCur < pEnd && load<u8>(pCur) == 41) {
      pCur++;
      return writ_set();
    }
  }
  return 0;
}

function parseNumber(): usize {
  const start = pCur;
  let p = pCur;
  const end = pEnd;
  if (load<u8>(p) == 45) p++;
  // Find the extent of the token, then validate it exactly.
  while (p < end) {
    const c = <u32>load<u8>(p);
    if (c - 48 < 10 || c == 46 || c == 101 || c == 69 || c == 43 || c == 45) p++;
    else break;
  }
  const len = p - start;
  const k = scanNumber(start, len);
  if (k < 0) return 0;
  pCur = p;
  return numberFromText(start, len, k == 0);
}

function parseString(): usize {
  const s = pCur + 1;
  let p = s;
  const end = pEnd;
  let escaped = false;
  let nonAscii = false;
  while (true) {
    if (p >= end) return 0;
    const c = <u32>load<u8>(p);
    if (c == 34) break;
    if (c == 92) {
      escaped = true;
      p += 2;
      continue;
    }
    if (c < 32) return 0;
    if (c >= 128) nonAscii = true;
    p++;
  }
  pCur = p + 1;
  const n = p - s;
  if (!escaped) {
    if (nonAscii && !validUtf8(s, n)) return 0;
    const v = malloc(16);
    store<u32>(v, T_STRING);
    store<u32>(v, <u32>n, OFF_LEN);
    store<u32>(v, <u32>s, OFF_STR_PTR);
    return v;
  }
  return decodeEscaped(s, n);
}

/** Length of the valid UTF-8 sequence at p (< end), or 0 if invalid. */
export function utf8Seq(p: usize, end: usize): usize {
  const c = <u32>load<u8>(p);
  if (c < 0x80) return 1;
  let n: usize;
  let cp: u32;
  let min: u32;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
    min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
    min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
    min = 0x10000;
  } else return 0;
  if (end - p < n) return 0;
  for (let i: usize = 1; i < n; i++) {
    const b = <u32>load<u8>(p + i);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

function validUtf8(p: usize, n: usize): bool {
  const end = p + n;
  while (p < end) {
    if (load<u8>(p) < 0x80) {
      p++;
      continue;
    }
    const k = utf8Seq(p, end);
    if (k == 0) return false;
    p += k;
  }
  return true;
}

function hex4(p: usize): i32 {
  let v: i32 = 0;
  for (let i: usize = 0; i < 4; i++) {
    const c = <i32>load<u8>(p + i);
    let d: i32;
    if (c >= 48 && c <= 57) d = c - 48;
    else if ((c | 32) >= 97 && (c | 32) <= 102) d = (c | 32) - 87;
    else return -1;
    v = (v << 4) | d;
  }
  return v;
}

/** Writes the UTF-8 encoding of code point `cp` at `out`; returns its length (1-4). */
export function putUtf8(out: usize, cp: u32): usize {
  if (cp < 0x80) {
    store<u8>(out, <u8>cp);
    return 1;
  }
  if (cp < 0x800) {
    store<u8>(out, <u8>(0xc0 | (cp >> 6)));
    store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 1);
    return 2;
  }
  if (cp < 0x10000) {
    store<u8>(out, <u8>(0xe0 | (cp >> 12)));
    store<u8>(out, <u8>(0x80 | ((cp >> 6) & 0x3f)), 1);
    store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 2);
    return 3;
  }
  store<u8>(out, <u8>(0xf0 | (cp >> 18)));
  store<u8>(out, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
  store<u8>(out, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
  store<u8>(out, <u8>(0x80 | (cp & 0x3f)), 3);
  return 4;
}

/** Decodes an escaped string body (n bytes at s) into a fresh string value. */
function decodeEscaped(s: usize, n: usize): usize {
  const v = malloc(16);
  const buf = malloc(n); // decoding never expands: \uXXXX (6 bytes) -> at most 3, a pair (12) -> 4
  const end = s + n;
  let i = s;
  let o = buf;
  while (i < end) {
    const c = <u32>load<u8>(i);
    if (c != 92) {
      if (c < 0x80) {
        store<u8>(o++, <u8>c);
        i++;
        continue;
      }
      const k = utf8Seq(i, end);
      if (k == 0) return 0;
      memory.copy(o, i, k);
      o += k;
      i += k;
      continue;
    }
    const e = <u32>load<u8>(i + 1);
    i += 2;
    if (e == 34 || e == 92 || e == 47) store<u8>(o++, <u8>e);
    else if (e == 110) store<u8>(o++, 10);
    else if (e == 116) store<u8>(o++, 9);
    else if (e == 114) store<u8>(o++, 13);
    else if (e == 98) store<u8>(o++, 8);
    else if (e == 102) store<u8>(o++, 12);
    else if (e == 117) {
      if (end - i < 4) return 0;
      let cp = hex4(i);
      if (cp < 0) return 0;
      i += 4;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        // A high surrogate combines with a following \uDC00-\uDFFF; alone it becomes U+FFFD.
        let lo: i32 = -1;
        if (end - i >= 6 && load<u8>(i) == 92 && load<u8>(i + 1) == 117) lo = hex4(i + 2);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          i += 6;
        } else cp = 0xfffd;
      } else if (cp >= 0xdc00 && cp <= 0xdfff) cp = 0xfffd;
      o += putUtf8(o, <u32>cp);
    } else return 0;
  }
  const len = o - buf;
  shrink(buf, len);
  store<u32>(v, T_STRING);
  store<u32>(v, <u32>len, OFF_LEN);
  store<u32>(v, <u32>buf, OFF_STR_PTR);
  return v;
}

function parseArray(): usize {
  if (++pDepth > MAX_DEPTH) return 0;
  pCur++;
  const arr = writ_array(0);
  skipWs();
  if (pCur < pEnd && load<u8>(pCur) == 93) {
    pCur++;
    pDepth--;
    return arr;
  }
  while (true) {
    const v = parseValue();
    if (v == 0) return 0;
    writ_array_append(arr, v);
    skipWs();
    if (pCur >= pEnd) return 0;
    const c = load<u8>(pCur++);
    if (c == 44) continue;
    if (c == 93) break;
    return 0;
  }
  pDepth--;
  return arr;
}

/** After `{`: an object, or (value mode) a set. */
function parseBrace(): usize {
  if (++pDepth > MAX_DEPTH) return 0;
  pCur++;
  skipWs();
  if (pCur < pEnd && load<u8>(pCur) == 125) {
    pCur++;
    pDepth--;
    return writ_object();
  }
  const first = parseValue();
  if (first == 0) return 0;
  skipWs();
  if (pCur >= pEnd) return 0;
  const c = load<u8>(pCur);
  let r: usize = 0;
  if (c == 58) {
    if (!pSets && tagOf(first) != T_STRING) return 0;
    r = parseObjectRest(first);
  } else if (pSets && (c == 44 || c == 125)) r = parseSetRest(first);
  if (r != 0) pDepth--;
  return r;
}

@inline
function keyCompare(a: usize, b: usize): i32 {
  return tagOf(a) == T_STRING && tagOf(b) == T_STRING ? compareStrings(a, b) : compare(a, b);
}

function parseObjectRest(firstKey: usize): usize {
  const obj = writ_object();
  let key = firstKey;
  let prev: usize = 0;
  let sorted = true;
  while (true) {
    pCur++; // ':'
    const v = parseValue();
    if (v == 0) return 0;
    if (prev != 0 && sorted && keyCompare(prev, key) >= 0) sorted = false;
    appendEntry(obj, key, v);
    prev = key;
    skipWs();
    if (pCur >= pEnd) return 0;
    const c = load<u8>(pCur++);
    if (c == 125) break;
    if (c != 44) return 0;
    key = parseValue();
    if (key == 0) return 0;
    if (!pSets && tagOf(key) != T_STRING) return 0;
    skipWs();
    if (pCur >= pEnd || load<u8>(pCur) != 58) return 0;
  }
  if (!sorted) finishObject(obj);
  return obj;
}

function parseSetRest(first: usize): usize {
  const set = writ_set();
  appendElem(set, first);
  let prev = first;
  let sorted = true;
  while (true) {
    skipWs();
    if (pCur >= pEnd) return 0;
    const c = load<u8>(pCur++);
    if (c == 125) break;
    if (c != 44) return 0;
    const v = parseValue();
    if (v == 0) return 0;
    if (sorted && keyCompare(prev, v) >= 0) sorted = false;
    appendElem(set, v);
    prev = v;
  }
  if (!sorted) finishSet(set);
  return set;
}

// ---------------------------------------------------------------------------------------------
// Serialization

let wPos: usize = 0;
let wValueMode: bool = false;

const NUM_BUF: usize = memory.data(400, 8); // >= FLOAT_TEXT_MAX

@inline
function wByte(b: u32): void {
  reserve(wPos + 1);
  store<u8>(wPos++, <u8>b);
}

function wBytes(ptr: usize, n: usize): void {
  reserve(wPos + n);
  memory.copy(wPos, ptr, n);
  wPos += n;
}

/** Writes an ASCII word packed little-endian into a u64 (up to 8 bytes). */
function wWord(word: u64, n: usize): void {
  reserve(wPos + 8);
  store<u64>(wPos, word);
  wPos += n;
}

const HEX: usize = memory.data<u8>([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

function wString(ptr: usize, n: usize): void {
  reserve(wPos + n + 2);
  store<u8>(wPos++, 34);
  let run = ptr;
  const end = ptr + n;
  for (let p = ptr; p < end; p++) {
    const c = <u32>load<u8>(p);
    if (c >= 32 && c != 34 && c != 92) continue;
    if (p > run) wBytes(run, p - run);
    run = p + 1;
    if (c == 34 || c == 92) {
      wByte(92);
      wByte(c);
    } else if (c == 10) wWord(0x6e5c, 2);
    else if (c == 13) wWord(0x725c, 2);
    else if (c == 9) wWord(0x745c, 2);
    else {
      wWord(0x3030755c, 4); // "\\u00"
      wByte(load<u8>(HEX + (c >> 4)));
      wByte(load<u8>(HEX + (c & 15)));
    }
  }
  if (end > run) wBytes(run, end - run);
  wByte(34);
}

function wNumber(v: usize): void {
  const k = numKind(v);
  if (k == N_INT) {
    reserve(wPos + 20);
    wPos += formatInt(load<i64>(v, 8), wPos);
  } else if (k == N_FLOAT) {
    const n = formatFloat(load<f64>(v, 8), NUM_BUF);
    wBytes(NUM_BUF, n);
  } else wBytes(<usize>load<u32>(v, 8), <usize>load<u32>(v, 4));
}

/** Rewrites the bytes [start, wPos) as a JSON string literal in place (for non-string object keys). */
function quoteInPlace(start: usize): void {
  const end = wPos;
  let extra: usize = 2;
  for (let p = start; p < end; p++) {
    const c = load<u8>(p);
    if (c == 34 || c == 92) extra++;
  }
  reserve(end + extra);
  let dst = end + extra - 1;
  store<u8>(dst--, 34);
  for (let p = end; p > start; ) {
    p--;
    const c = load<u8>(p);
    store<u8>(dst--, c);
    if (c == 34 || c == 92) store<u8>(dst--, 92);
  }
  store<u8>(dst, 34);
  wPos = end + extra;
}

function wValue(v: usize): void {
  switch (tagOf(v)) {
    case T_NULL:
      wWord(0x6c6c756e, 4);
      return;
    case T_BOOLEAN:
      if (load<u8>(v, 1) != 0) wWord(0x65757274, 4);
      else wWord(0x65736c6166, 5);
      return;
    case T_NUMBER:
      wNumber(v);
      return;
    case T_STRING:
      wString(strPtr(v), lenOf(v));
      return;
    case T_ARRAY: {
      wByte(91);
      wElems(v);
      wByte(93);
      return;
    }
    case T_SET: {
      if (!wValueMode) {
        wByte(91);
        wElems(v);
        wByte(93);
      } else if (lenOf(v) == 0) wWord(0x2928746573, 5); // set()
      else {
        wByte(123);
        wElems(v);
        wByte(125);
      }
      return;
    }
    case T_OBJECT: {
      wByte(123);
      const n = lenOf(v);
      const items = elemsOf(v);
      for (let i: u32 = 0; i < n; i++) {
        if (i > 0) wByte(44);
        const k = <usize>load<u32>(items + (<usize>i << 3));
        if (wValueMode || tagOf(k) == T_STRING) wValue(k);
        else {
          const start = wPos;
          wValue(k);
          quoteInPlace(start);
        }
        wByte(58);
        wValue(<usize>load<u32>(items + (<usize>i << 3), 4));
      }
      wByte(125);
      return;
    }
  }
  fail("illegal value");
}

function wElems(v: usize): void {
  const n = lenOf(v);
  const items = elemsOf(v);
  for (let i: u32 = 0; i < n; i++) {
    if (i > 0) wByte(44);
    wValue(<usize>load<u32>(items + (<usize>i << 2)));
  }
}

/** Serializes `v`; returns [start, end) via wPos. The bytes are claimed as one allocation. */
function dump(v: usize, valueMode: bool, terminate: bool): usize {
  if (v == 0) fail("cannot serialize an undefined value");
  const start = freeStart();
  wPos = start;
  wValueMode = valueMode;
  wValue(v);
  if (terminate) wByte(0);
  commit(start, wPos);
  return start;
}

/** JSON text of `v` (NUL-terminated). Sets become arrays; non-string object keys become their JSON text. */
export function opa_json_dump(v: usize): usize {
  return dump(v, false, true);
}

/** Rego value text of `v` (NUL-terminated): sets as `{1,2}` / `set()`, object keys as values. */
export function opa_value_dump(v: usize): usize {
  return dump(v, true, true);
}

/** A string value holding the JSON (format 0) or Rego value (format 1) text of `v`. */
export function writ_to_json_string(v: usize, format: i32): usize {
  const start = dump(v, format == 1, false);
  const len = wPos - start;
  const s = malloc(16);
  store<u32>(s, T_STRING);
  store<u32>(s, <u32>len, OFF_LEN);
  store<u32>(s, <u32>start, OFF_STR_PTR);
  return s;
}

/** Parses a string value's bytes as JSON (format 0) or Rego value text (format 1); 0 if invalid. */
export function writ_parse_string(s: usize, format: i32): usize {
  if (s == 0 || tagOf(s) != T_STRING) return 0;
  return parseTop(strPtr(s), lenOf(s), format == 1);
}
