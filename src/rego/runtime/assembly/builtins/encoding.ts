// Encoding builtins: json.marshal, json.unmarshal, base64.encode/decode, base64url.encode/decode,
// base64url.encode_no_pad.

import { utf8Seq, writ_parse_string, writ_to_json_string } from "../json";
import { free } from "../mem";
import { OFF_LEN, T_STRING, lenOf, strPtr } from "../value";
import { isType, stringAlloc, stringBytes, stringFinish } from "./util";

// ---------------------------------------------------------------------------------------------
// JSON

const HEX: usize = memory.data<u8>([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/**
 * Bytes Go's encoding/json escapes inside strings beyond what the runtime's serializer does: '<', '>'
 * and '&' (as \u003c, \u003e, \u0026), U+2028 and U+2029 (\u2028, \u2029), and invalid UTF-8 (each
 * invalid byte as \ufffd). Returns the length of the sequence at `p` that needs escaping, 0 if none.
 */
function goEscapeAt(p: usize, end: usize): usize {
  const c = <u32>load<u8>(p);
  if (c < 0x80) return c == 60 || c == 62 || c == 38 ? 1 : 0;
  const n = utf8Seq(p, end);
  if (n == 0) return 1;
  if (n == 3 && c == 0xe2 && load<u8>(p + 1) == 0x80 && (load<u8>(p + 2) == 0xa8 || load<u8>(p + 2) == 0xa9)) return 3;
  return 0;
}

/** Writes the six-byte escape `\uXXXX` for code point `cp` (< 0x10000) at `out`. */
function writeEscape(out: usize, cp: u32): void {
  store<u8>(out, 92);
  store<u8>(out + 1, 117);
  store<u8>(out + 2, load<u8>(HEX + ((cp >> 12) & 15)));
  store<u8>(out + 3, load<u8>(HEX + ((cp >> 8) & 15)));
  store<u8>(out + 4, load<u8>(HEX + ((cp >> 4) & 15)));
  store<u8>(out + 5, load<u8>(HEX + (cp & 15)));
}

/** json.marshal(v): JSON text like Go's json.Marshal (sets as arrays, keys sorted, no whitespace). */
export function writ_builtin_json_marshal(v: usize): usize {
  if (v == 0) return 0;
  const text = writ_to_json_string(v, 0);
  const p = strPtr(text);
  const len = <usize>lenOf(text);
  const end = p + len;
  // Outside string literals the JSON text is ASCII without '<', '>' or '&', so every sequence found
  // here is inside a string. Most texts need no change.
  let extra: usize = 0;
  for (let q = p; q < end; ) {
    const n = goEscapeAt(q, end);
    if (n == 0) {
      q++;
      continue;
    }
    extra += 6 - n;
    q += n;
  }
  if (extra == 0) return text;
  const r = stringAlloc(len + extra);
  let out = stringBytes(r);
  for (let q = p; q < end; ) {
    const n = goEscapeAt(q, end);
    if (n == 0) {
      store<u8>(out++, load<u8>(q++));
      continue;
    }
    const c = <u32>load<u8>(q);
    let cp: u32 = 0xfffd;
    if (c < 0x80) cp = c;
    else if (n == 3) cp = 0x2000 | (<u32>load<u8>(q + 2) & 0x3f);
    writeEscape(out, cp);
    out += 6;
    q += n;
  }
  return stringFinish(r, len + extra);
}

/** json.unmarshal(s): the value of JSON text; undefined when it is not valid JSON. */
export function writ_builtin_json_unmarshal(s: usize): usize {
  if (!isType(s, T_STRING)) return 0;
  return writ_parse_string(s, 0);
}

// ---------------------------------------------------------------------------------------------
// Base64 (RFC 4648): standard and URL-safe alphabets

const STD_ALPHABET: usize = memory.data<u8>([
  65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 97, 98, 99,
  100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122,
  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 43, 47,
]);
const URL_ALPHABET: usize = memory.data<u8>([
  65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 97, 98, 99,
  100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122,
  48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 45, 95,
]);

/** Encodes the bytes of string `s`; with `pad`, '=' fills the last quantum. */
function base64Encode(s: usize, alphabet: usize, pad: bool): usize {
  if (!isType(s, T_STRING)) return 0;
  const p = strPtr(s);
  const n = <usize>lenOf(s);
  const full = n / 3;
  const rest = n - full * 3;
  const outLen = full * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1);
  const r = stringAlloc(outLen);
  let out = stringBytes(r);
  let i: usize = 0;
  for (let k: usize = 0; k < full; k++) {
    const x = (<u32>load<u8>(p + i) << 16) | (<u32>load<u8>(p + i + 1) << 8) | <u32>load<u8>(p + i + 2);
    store<u8>(out, load<u8>(alphabet + (x >> 18)));
    store<u8>(out + 1, load<u8>(alphabet + ((x >> 12) & 63)));
    store<u8>(out + 2, load<u8>(alphabet + ((x >> 6) & 63)));
    store<u8>(out + 3, load<u8>(alphabet + (x & 63)));
    out += 4;
    i += 3;
  }
  if (rest != 0) {
    const x = (<u32>load<u8>(p + i) << 16) | (rest == 2 ? <u32>load<u8>(p + i + 1) << 8 : 0);
    store<u8>(out, load<u8>(alphabet + (x >> 18)));
    store<u8>(out + 1, load<u8>(alphabet + ((x >> 12) & 63)));
    if (rest == 2) store<u8>(out + 2, load<u8>(alphabet + ((x >> 6) & 63)));
    if (pad) {
      if (rest == 1) store<u8>(out + 2, 61);
      store<u8>(out + 3, 61);
    }
  }
  store<u32>(r, <u32>outLen, OFF_LEN);
  return r;
}

/** The 6-bit value of base64 symbol `c` in the standard (or URL-safe) alphabet, or -1. */
function symbolValue(c: u32, url: bool): i32 {
  if (c - 65 < 26) return <i32>(c - 65);
  if (c - 97 < 26) return <i32>(c - 71);
  if (c - 48 < 10) return <i32>(c + 4);
  if (url) return c == 45 ? 62 : c == 95 ? 63 : -1;
  return c == 43 ? 62 : c == 47 ? 63 : -1;
}

/** Gives back an unfinished result string (the most recent allocation) and returns undefined. */
function discard(r: usize): usize {
  free(r);
  return 0;
}

/**
 * Decodes `len` bytes of padded base64 like Go's base64.StdEncoding / URLEncoding: '\r' and '\n' are
 * skipped, the input must end on a whole quantum, '=' may only pad the last one. Returns a string of
 * the decoded bytes, or 0 if the text is invalid. `extraPad` '=' characters are treated as appended.
 */
function base64Decode(p: usize, len: usize, url: bool, extraPad: u32): usize {
  const r = stringAlloc((len + extraPad) / 4 * 3 + 3);
  let out = stringBytes(r);
  let quantum: u32 = 0; // bits collected
  let count: u32 = 0; // symbols in the current quantum
  let padding: u32 = 0; // '=' seen in the current (last) quantum
  const total = len + <usize>extraPad;
  for (let i: usize = 0; i < total; i++) {
    const c = i < len ? <u32>load<u8>(p + i) : 61;
    if (c == 13 || c == 10) continue;
    if (c == 61) {
      // Padding: only at positions 2 and 3 of a quantum, and nothing after the quantum it completes.
      if (count + padding < 2 || count == 4) return discard(r);
      padding++;
      if (count + padding == 4) {
        if (count == 2) store<u8>(out++, <u8>(quantum >> 4));
        else {
          store<u8>(out++, <u8>(quantum >> 10));
          store<u8>(out++, <u8>(quantum >> 2));
        }
        count = 4;
      }
      continue;
    }
    if (padding != 0 || count == 4) return discard(r);
    const v = symbolValue(c, url);
    if (v < 0) return discard(r);
    quantum = (quantum << 6) | <u32>v;
    count++;
    if (count == 4) {
      store<u8>(out++, <u8>(quantum >> 16));
      store<u8>(out++, <u8>(quantum >> 8));
      store<u8>(out++, <u8>quantum);
      quantum = 0;
      count = 0;
    }
  }
  if (padding != 0 ? count != 4 : count != 0) return discard(r);
  return stringFinish(r, out - stringBytes(r));
}

export function writ_builtin_base64_encode(s: usize): usize {
  return base64Encode(s, STD_ALPHABET, true);
}

export function writ_builtin_base64url_encode(s: usize): usize {
  return base64Encode(s, URL_ALPHABET, true);
}

export function writ_builtin_base64url_encode_no_pad(s: usize): usize {
  return base64Encode(s, URL_ALPHABET, false);
}

export function writ_builtin_base64_decode(s: usize): usize {
  if (!isType(s, T_STRING)) return 0;
  return base64Decode(strPtr(s), lenOf(s), false, 0);
}

/** base64url.decode: padded or unpadded (missing padding is restored first, as OPA does). */
export function writ_builtin_base64url_decode(s: usize): usize {
  if (!isType(s, T_STRING)) return 0;
  const p = strPtr(s);
  const len = <usize>lenOf(s);
  let extraPad: u32 = 0;
  if (len == 0 || load<u8>(p + len - 1) != 61) {
    const rest = len & 3;
    if (rest == 1) return 0;
    if (rest == 2) extraPad = 2;
    else if (rest == 3) extraPad = 1;
  }
  return base64Decode(p, len, true, extraPad);
}
