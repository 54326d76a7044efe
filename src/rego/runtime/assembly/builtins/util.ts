// Helpers shared by the native builtins: type tests, string construction and UTF-8 decoding with Go's
// rules (OPA's builtins are Go code: an invalid byte decodes as U+FFFD and advances by one byte).

import { malloc, shrink } from "../mem";
import { utf8Seq } from "../json";
import { OFF_LEN, OFF_STR_PTR, T_STRING, lenOf, strPtr, tagOf } from "../value";

/** 1 if `v` is defined and has type tag `tag`. */
@inline
export function isType(v: usize, tag: u32): bool {
  return v != 0 && tagOf(v) == tag;
}

// ---------------------------------------------------------------------------------------------
// Strings built in one block: a 16-byte header followed by the bytes, shrunk once the final length
// is known (the block must still be the most recent allocation at that point).

/** Allocates a string value with room for `maxLen` bytes at `stringBytes(v)`; finish with stringFinish. */
export function stringAlloc(maxLen: usize): usize {
  const v = malloc(16 + maxLen);
  store<u32>(v, T_STRING);
  store<u32>(v, <u32>(v + 16), OFF_STR_PTR);
  return v;
}

/** Where the bytes of a string from stringAlloc go. */
@inline
export function stringBytes(v: usize): usize {
  return v + 16;
}

/** Sets the final length of a string from stringAlloc and returns the unused room to the heap. */
export function stringFinish(v: usize, len: usize): usize {
  store<u32>(v, <u32>len, OFF_LEN);
  shrink(v, 16 + len);
  return v;
}

/** A string value sharing the bytes [ptr, ptr + len) of an existing (immutable) string. */
export function stringSlice(ptr: usize, len: usize): usize {
  const v = malloc(16);
  store<u32>(v, T_STRING);
  store<u32>(v, <u32>len, OFF_LEN);
  store<u32>(v, <u32>ptr, OFF_STR_PTR);
  return v;
}

/** The empty string (static, never mutated). */
export const EMPTY_STRING: usize = memory.data<u32>([4, 0, 0, 0], 8);

// ---------------------------------------------------------------------------------------------
// UTF-8

/** Width in bytes of the last sequence decoded by decodeRune. */
export let runeWidth: usize = 0;

/**
 * Decodes the code point at `p` (< end) like Go's utf8.DecodeRune: an invalid or truncated sequence
 * decodes as U+FFFD with width 1. The width is left in `runeWidth`.
 */
export function decodeRune(p: usize, end: usize): u32 {
  const c = <u32>load<u8>(p);
  if (c < 0x80) {
    runeWidth = 1;
    return c;
  }
  const n = utf8Seq(p, end);
  if (n == 0) {
    runeWidth = 1;
    return 0xfffd;
  }
  runeWidth = n;
  if (n == 2) return ((c & 0x1f) << 6) | (<u32>load<u8>(p + 1) & 0x3f);
  if (n == 3) return ((c & 0x0f) << 12) | ((<u32>load<u8>(p + 1) & 0x3f) << 6) | (<u32>load<u8>(p + 2) & 0x3f);
  return (
    ((c & 0x07) << 18) |
    ((<u32>load<u8>(p + 1) & 0x3f) << 12) |
    ((<u32>load<u8>(p + 2) & 0x3f) << 6) |
    (<u32>load<u8>(p + 3) & 0x3f)
  );
}

/** Width of the sequence at `p` (< end) as Go steps over it: a valid sequence, else 1 byte. */
@inline
export function runeStep(p: usize, end: usize): usize {
  if (load<u8>(p) < 0x80) return 1;
  const n = utf8Seq(p, end);
  return n == 0 ? 1 : n;
}

/** Number of code points in `len` bytes at `ptr`, counting each invalid byte as one (Go's []rune). */
export function runeCount(ptr: usize, len: usize): u32 {
  const end = ptr + len;
  let n: u32 = 0;
  let p = ptr;
  while (p < end) {
    p += runeStep(p, end);
    n++;
  }
  return n;
}

/** Index of the first occurrence of `n` bytes at `needle` in `len` bytes at `hay` from `from`, or -1. */
export function indexOfBytes(hay: usize, len: usize, from: usize, needle: usize, n: usize): isize {
  if (n == 0) return from <= len ? <isize>from : -1;
  if (n > len) return -1;
  const first = load<u8>(needle);
  const last = len - n;
  for (let i = from; i <= last; i++) {
    if (load<u8>(hay + i) == first && memory.compare(hay + i, needle, n) == 0) return <isize>i;
  }
  return -1;
}

/** 1 if string values `s` starts with the bytes of string value `prefix`. */
export function hasPrefix(s: usize, prefix: usize): bool {
  const n = lenOf(prefix);
  return n <= lenOf(s) && memory.compare(strPtr(s), strPtr(prefix), n) == 0;
}

/** 1 if string value `s` ends with the bytes of string value `suffix`. */
export function hasSuffix(s: usize, suffix: usize): bool {
  const n = lenOf(suffix);
  const ls = lenOf(s);
  return n <= ls && memory.compare(strPtr(s) + ls - n, strPtr(suffix), n) == 0;
}
