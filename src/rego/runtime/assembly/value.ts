// The value model. Every value is a pointer to an 8-byte-aligned header whose first byte is the type
// tag (OPA's numbering, which is also OPA's sort order between types). Address 0 means "undefined".
//
//   offset  0    1     4        8          12
//   null    [1]                                     8 bytes, interned (NULL_V)
//   boolean [2]  b                                  8 bytes, interned (FALSE_V / TRUE_V)
//   number  [3]  kind  reflen   i64 | f64 | refptr  16 bytes; kind 0 int, 1 float, 2 ref (decimal text)
//   string  [4]        len      bytesptr            16 bytes; UTF-8, not NUL-terminated
//   array   [5]        len      cap        elemsptr 16 bytes; elems: u32[cap] value pointers
//   object  [6]        len      cap        entsptr  16 bytes; ents: (key u32, value u32)[cap], sorted by key
//   set     [7]        len      cap        elemsptr 16 bytes; elems: u32[cap], sorted
//
// Objects and sets are kept sorted by OPA's total order (see compare), so iteration is in OPA's order,
// lookups are binary searches and equality/comparison are linear merges. Byte 2 of objects and sets
// holds flags (bit 0: created by a path insert, 24-byte header with the owning root at +16; see
// paths.ts); readers only ever look at byte 0 for the type.
// Values are immutable once shared: only the code that created a collection may insert into it.

import { fail } from "./abort";
import { malloc, realloc, mark, release } from "./mem";
import { compareNumbers, numberIndex, writ_number_int } from "./number";

@inline export const T_NULL: u32 = 1;
@inline export const T_BOOLEAN: u32 = 2;
@inline export const T_NUMBER: u32 = 3;
@inline export const T_STRING: u32 = 4;
@inline export const T_ARRAY: u32 = 5;
@inline export const T_OBJECT: u32 = 6;
@inline export const T_SET: u32 = 7;

// Header field offsets.
@inline export const OFF_LEN: usize = 4;
@inline export const OFF_CAP: usize = 8;
@inline export const OFF_STR_PTR: usize = 8;
@inline export const OFF_ELEMS: usize = 12;

export const NULL_V: usize = memory.data<u8>([1, 0, 0, 0, 0, 0, 0, 0], 8);
export const FALSE_V: usize = memory.data<u8>([2, 0, 0, 0, 0, 0, 0, 0], 8);
export const TRUE_V: usize = memory.data<u8>([2, 1, 0, 0, 0, 0, 0, 0], 8);

@inline
export function tagOf(v: usize): u32 {
  return <u32>load<u8>(v);
}

@inline
export function lenOf(v: usize): u32 {
  return load<u32>(v, OFF_LEN);
}

@inline
export function elemsOf(v: usize): usize {
  return <usize>load<u32>(v, OFF_ELEMS);
}

@inline
export function strPtr(v: usize): usize {
  return <usize>load<u32>(v, OFF_STR_PTR);
}

// ---------------------------------------------------------------------------------------------
// Scalars

export function writ_null(): usize {
  return NULL_V;
}

export function writ_boolean(b: i32): usize {
  return b != 0 ? TRUE_V : FALSE_V;
}

/** A string value over `len` UTF-8 bytes at `ptr`; the bytes are referenced, not copied. */
export function writ_string(ptr: usize, len: u32): usize {
  const v = malloc(16);
  store<u32>(v, T_STRING);
  store<u32>(v, len, OFF_LEN);
  store<u32>(v, <u32>ptr, OFF_STR_PTR);
  return v;
}

/** A string value owning a fresh copy of the bytes. */
export function writ_string_copy(ptr: usize, len: u32): usize {
  const v = malloc(16 + <usize>len);
  memory.copy(v + 16, ptr, len);
  store<u32>(v, T_STRING);
  store<u32>(v, len, OFF_LEN);
  store<u32>(v, <u32>(v + 16), OFF_STR_PTR);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Collections

function newCollection(tag: u32, cap: u32, itemSize: usize): usize {
  const v = malloc(16);
  store<u32>(v, tag);
  store<u32>(v, 0, OFF_LEN);
  store<u32>(v, cap, OFF_CAP);
  store<u32>(v, cap != 0 ? <u32>malloc(<usize>cap * itemSize) : 0, OFF_ELEMS);
  return v;
}

/** Makes room for one more item (doubling the capacity) and returns the items pointer. */
function grow(v: usize, itemSize: usize): usize {
  const n = lenOf(v);
  const cap = load<u32>(v, OFF_CAP);
  let items = elemsOf(v);
  if (n < cap) return items;
  const ncap: u32 = cap < 4 ? 4 : cap << 1;
  if (ncap < cap) fail("out of memory");
  items = realloc(items, <usize>cap * itemSize, <usize>ncap * itemSize);
  store<u32>(v, <u32>items, OFF_ELEMS);
  store<u32>(v, ncap, OFF_CAP);
  return items;
}

export function writ_array(cap: u32): usize {
  return newCollection(T_ARRAY, cap, 4);
}

export function writ_array_append(arr: usize, v: usize): void {
  const items = grow(arr, 4);
  const n = lenOf(arr);
  store<u32>(items + (<usize>n << 2), <u32>v);
  store<u32>(arr, n + 1, OFF_LEN);
}

/** Element `i` of an array (no bounds check beyond returning 0 past the end). */
export function writ_array_get(arr: usize, i: u32): usize {
  if (i >= lenOf(arr)) return 0;
  return <usize>load<u32>(elemsOf(arr) + (<usize>i << 2));
}

/** Replaces element `i` (< length) of an array the caller owns. */
export function writ_array_set(arr: usize, i: u32, v: usize): void {
  if (i >= lenOf(arr)) fail("array index out of range");
  store<u32>(elemsOf(arr) + (<usize>i << 2), <u32>v);
}

export function writ_object(): usize {
  return newCollection(T_OBJECT, 0, 8);
}

export function writ_object_with_cap(cap: u32): usize {
  return newCollection(T_OBJECT, cap, 8);
}

export function writ_set(): usize {
  return newCollection(T_SET, 0, 4);
}

export function writ_set_with_cap(cap: u32): usize {
  return newCollection(T_SET, cap, 4);
}

/**
 * Binary search for `key` among `n` items of `itemSize` bytes whose first u32 is a value pointer.
 * Returns the index when found, otherwise -(insertion point) - 1.
 */
function search(items: usize, n: u32, itemSize: usize, key: usize): i32 {
  let lo: i32 = 0;
  let hi: i32 = <i32>n - 1;
  const keyIsString = tagOf(key) == T_STRING;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = <usize>load<u32>(items + <usize>mid * itemSize);
    const c = keyIsString && tagOf(k) == T_STRING ? compareStrings(k, key) : compare(k, key);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

/** Moves items [pos, n) one slot up and returns the address of slot `pos`. */
function openSlot(items: usize, n: u32, pos: u32, itemSize: usize): usize {
  const at = items + <usize>pos * itemSize;
  if (pos < n) memory.copy(at + itemSize, at, <usize>(n - pos) * itemSize);
  return at;
}

/** Index of `key` in object `obj`, or -1. */
export function objectIndex(obj: usize, key: usize): i32 {
  const i = search(elemsOf(obj), lenOf(obj), 8, key);
  return i < 0 ? -1 : i;
}

export function writ_object_get(obj: usize, key: usize): usize {
  const i = search(elemsOf(obj), lenOf(obj), 8, key);
  return i < 0 ? 0 : <usize>load<u32>(elemsOf(obj) + (<usize>i << 3), 4);
}

/** Inserts or replaces `key: value` (appending is O(1) when keys arrive in sorted order). */
export function writ_object_insert(obj: usize, key: usize, value: usize): void {
  const n = lenOf(obj);
  if (n > 0) {
    const items = elemsOf(obj);
    const last = items + (<usize>(n - 1) << 3);
    const c = compare(key, <usize>load<u32>(last));
    if (c == 0) {
      store<u32>(last, <u32>value, 4);
      return;
    }
    if (c < 0) {
      const i = search(items, n - 1, 8, key);
      if (i >= 0) {
        store<u32>(items + (<usize>i << 3), <u32>value, 4);
        return;
      }
      const at = openSlot(grow(obj, 8), n, <u32>(-i - 1), 8);
      store<u32>(at, <u32>key);
      store<u32>(at, <u32>value, 4);
      store<u32>(obj, n + 1, OFF_LEN);
      return;
    }
  }
  const at = grow(obj, 8) + (<usize>n << 3);
  store<u32>(at, <u32>key);
  store<u32>(at, <u32>value, 4);
  store<u32>(obj, n + 1, OFF_LEN);
}

/**
 * Inserts `key: value` unless `key` is already present. Returns 0 when inserted or when the present
 * value equals `value`, 1 on a conflict (present with a different value; the object is unchanged).
 */
export function writ_object_insert_once(obj: usize, key: usize, value: usize): i32 {
  const i = search(elemsOf(obj), lenOf(obj), 8, key);
  if (i >= 0) {
    const old = <usize>load<u32>(elemsOf(obj) + (<usize>i << 3), 4);
    return writ_equal(old, value) ? 0 : 1;
  }
  const n = lenOf(obj);
  const at = openSlot(grow(obj, 8), n, <u32>(-i - 1), 8);
  store<u32>(at, <u32>key);
  store<u32>(at, <u32>value, 4);
  store<u32>(obj, n + 1, OFF_LEN);
  return 0;
}

/** Removes `key` from an object the caller owns. Returns 1 if it was present. */
export function writ_object_remove(obj: usize, key: usize): i32 {
  const n = lenOf(obj);
  const items = elemsOf(obj);
  const i = search(items, n, 8, key);
  if (i < 0) return 0;
  const at = items + (<usize>i << 3);
  memory.copy(at, at + 8, <usize>(n - 1 - <u32>i) << 3);
  store<u32>(obj, n - 1, OFF_LEN);
  return 1;
}

/** Adds `v` to set `set` (no-op if an equal element is present). */
export function writ_set_add(set: usize, v: usize): void {
  const n = lenOf(set);
  if (n > 0) {
    const items = elemsOf(set);
    const c = compare(v, <usize>load<u32>(items + (<usize>(n - 1) << 2)));
    if (c == 0) return;
    if (c < 0) {
      const i = search(items, n - 1, 4, v);
      if (i >= 0) return;
      const at = openSlot(grow(set, 4), n, <u32>(-i - 1), 4);
      store<u32>(at, <u32>v);
      store<u32>(set, n + 1, OFF_LEN);
      return;
    }
  }
  store<u32>(grow(set, 4) + (<usize>n << 2), <u32>v);
  store<u32>(set, n + 1, OFF_LEN);
}

/** The element of `set` equal to `v`, or 0. */
export function writ_set_get(set: usize, v: usize): usize {
  const i = search(elemsOf(set), lenOf(set), 4, v);
  return i < 0 ? 0 : <usize>load<u32>(elemsOf(set) + (<usize>i << 2));
}

/** Removes `v` from a set the caller owns. Returns 1 if it was present. */
export function writ_set_remove(set: usize, v: usize): i32 {
  const n = lenOf(set);
  const items = elemsOf(set);
  const i = search(items, n, 4, v);
  if (i < 0) return 0;
  const at = items + (<usize>i << 2);
  memory.copy(at, at + 4, <usize>(n - 1 - <u32>i) << 2);
  store<u32>(set, n - 1, OFF_LEN);
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Bulk builders: append unsorted, then sort + dedupe once (used by the JSON parser).

/** Appends an entry without keeping the order; call finishObject afterwards. */
export function appendEntry(obj: usize, key: usize, value: usize): void {
  const n = lenOf(obj);
  const at = grow(obj, 8) + (<usize>n << 3);
  store<u32>(at, <u32>key);
  store<u32>(at, <u32>value, 4);
  store<u32>(obj, n + 1, OFF_LEN);
}

/** Appends an element without keeping the order; call finishSet afterwards. */
export function appendElem(set: usize, v: usize): void {
  const n = lenOf(set);
  store<u32>(grow(set, 4) + (<usize>n << 2), <u32>v);
  store<u32>(set, n + 1, OFF_LEN);
}

/** Sorts the entries of an object built with appendEntry; for duplicate keys the last one wins. */
export function finishObject(obj: usize): void {
  const n = lenOf(obj);
  if (n < 2) return;
  const items = elemsOf(obj);
  sortItems<u64>(items, n);
  let w: u32 = 1;
  for (let i: u32 = 1; i < n; i++) {
    const e = load<u64>(items + (<usize>i << 3));
    const prev = items + (<usize>(w - 1) << 3);
    if (compare(<usize>load<u32>(prev), <usize>(<u32>e)) == 0) {
      // Stable sort: later duplicates come later, so the last value wins; the first key stays.
      store<u32>(prev, <u32>(e >> 32), 4);
    } else {
      store<u64>(items + (<usize>w << 3), e);
      w++;
    }
  }
  store<u32>(obj, w, OFF_LEN);
}

/** Sorts and dedupes the elements of a set built with appendElem. */
export function finishSet(set: usize): void {
  const n = lenOf(set);
  if (n < 2) return;
  const items = elemsOf(set);
  sortItems<u32>(items, n);
  let w: u32 = 1;
  for (let i: u32 = 1; i < n; i++) {
    const e = load<u32>(items + (<usize>i << 2));
    if (compare(<usize>load<u32>(items + (<usize>(w - 1) << 2)), <usize>e) != 0) {
      store<u32>(items + (<usize>w << 2), e);
      w++;
    }
  }
  store<u32>(set, w, OFF_LEN);
}

/** Stable in-place sort of `n` value pointers by OPA's order (duplicates kept). */
export function sortValues(items: usize, n: u32): void {
  sortItems<u32>(items, n);
}

@inline
function itemKey<T>(item: T): usize {
  return <usize>(<u32>item);
}

/** Stable sort of `n` items (u32 value pointers, or u64 entries keyed by their low u32). */
function sortItems<T>(base: usize, n: u32): void {
  const size = sizeof<T>();
  const RUN: u32 = 12;
  // Insertion-sort short runs.
  for (let s: u32 = 0; s < n; s += RUN) {
    const e = s + RUN < n ? s + RUN : n;
    for (let i = s + 1; i < e; i++) {
      const x = load<T>(base + <usize>i * size);
      let j = i;
      while (j > s) {
        const y = load<T>(base + <usize>(j - 1) * size);
        if (compare(itemKey<T>(y), itemKey<T>(x)) <= 0) break;
        store<T>(base + <usize>j * size, y);
        j--;
      }
      store<T>(base + <usize>j * size, x);
    }
  }
  if (n <= RUN) return;
  // Bottom-up merges, ping-ponging with a scratch buffer.
  const m = mark();
  const tmp = malloc(<usize>n * size);
  let src = base;
  let dst = tmp;
  for (let width = RUN; width < n; width <<= 1) {
    for (let lo: u32 = 0; lo < n; lo += width << 1) {
      const mid = lo + width < n ? lo + width : n;
      const hi = lo + (width << 1) < n ? lo + (width << 1) : n;
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        const a = load<T>(src + <usize>i * size);
        const b = load<T>(src + <usize>j * size);
        if (compare(itemKey<T>(a), itemKey<T>(b)) <= 0) {
          store<T>(dst + <usize>k * size, a);
          i++;
        } else {
          store<T>(dst + <usize>k * size, b);
          j++;
        }
        k++;
      }
      if (i < mid) memory.copy(dst + <usize>k * size, src + <usize>i * size, <usize>(mid - i) * size);
      else if (j < hi) memory.copy(dst + <usize>k * size, src + <usize>j * size, <usize>(hi - j) * size);
    }
    const t = src;
    src = dst;
    dst = t;
  }
  if (src != base) memory.copy(base, src, <usize>n * size);
  release(m);
}

// ---------------------------------------------------------------------------------------------
// Access

/** Type tag of `v` (1..7), or 0 for undefined. */
export function writ_type(v: usize): u32 {
  return v == 0 ? 0 : tagOf(v);
}

/** Element count of arrays, objects and sets; byte length of strings; 0 otherwise. */
export function writ_length(v: usize): u32 {
  if (v == 0) return 0;
  const t = tagOf(v);
  return t >= T_STRING ? lenOf(v) : 0;
}

/**
 * `v[key]`: object lookup by key, array lookup by an integer number (ints and integral floats, like
 * OPA's Number.Int), set membership (returns the element). Anything else is undefined (0).
 */
export function writ_value_get(v: usize, key: usize): usize {
  if (v == 0 || key == 0) return 0;
  const t = tagOf(v);
  if (t == T_OBJECT) return writ_object_get(v, key);
  if (t == T_ARRAY) {
    if (tagOf(key) != T_NUMBER) return 0;
    const i = numberIndex(key);
    if (i < 0 || i >= <i64>lenOf(v)) return 0;
    return <usize>load<u32>(elemsOf(v) + (<usize>i << 2));
  }
  if (t == T_SET) return writ_set_get(v, key);
  return 0;
}

/** Key at position `i`: the index (a new number) for arrays, the key for objects, the element for sets. */
export function writ_key_at(v: usize, i: u32): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t < T_ARRAY || i >= lenOf(v)) return 0;
  if (t == T_ARRAY) return writ_number_int(<i64>i);
  if (t == T_OBJECT) return <usize>load<u32>(elemsOf(v) + (<usize>i << 3));
  return <usize>load<u32>(elemsOf(v) + (<usize>i << 2));
}

/** Value at position `i`: the element for arrays and sets, the value for objects. */
export function writ_value_at(v: usize, i: u32): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t < T_ARRAY || i >= lenOf(v)) return 0;
  if (t == T_OBJECT) return <usize>load<u32>(elemsOf(v) + (<usize>i << 3), 4);
  return <usize>load<u32>(elemsOf(v) + (<usize>i << 2));
}

/** 1 unless `v` is undefined or `false` (Rego's notion of a satisfied expression). */
export function writ_truthy(v: usize): i32 {
  return v != 0 && !(tagOf(v) == T_BOOLEAN && load<u8>(v, 1) == 0) ? 1 : 0;
}

/** 1 if `v` is the boolean true. */
export function writ_is_true(v: usize): i32 {
  return v != 0 && tagOf(v) == T_BOOLEAN && load<u8>(v, 1) != 0 ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Comparison

export function compareStrings(a: usize, b: usize): i32 {
  const la = lenOf(a);
  const lb = lenOf(b);
  const n = la < lb ? la : lb;
  const c = memory.compare(strPtr(a), strPtr(b), n);
  if (c != 0) return c < 0 ? -1 : 1;
  return la < lb ? -1 : la > lb ? 1 : 0;
}

/**
 * OPA's total order: undefined < null < boolean < number < string < array < object < set;
 * false < true; numbers numerically (exactly, across int/float/decimal-text representations);
 * strings bytewise; arrays element-wise then by length; objects by (key, value) pairs in key order
 * then by length; sets element-wise then by length. Returns -1, 0 or 1.
 */
export function compare(a: usize, b: usize): i32 {
  if (a == b) return 0;
  if (a == 0) return -1;
  if (b == 0) return 1;
  const ta = tagOf(a);
  const tb = tagOf(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  switch (ta) {
    case T_NULL:
      return 0;
    case T_BOOLEAN: {
      const x = <i32>load<u8>(a, 1);
      const y = <i32>load<u8>(b, 1);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case T_NUMBER:
      return compareNumbers(a, b);
    case T_STRING:
      return compareStrings(a, b);
    case T_ARRAY:
    case T_SET: {
      const la = lenOf(a);
      const lb = lenOf(b);
      const n = la < lb ? la : lb;
      const ea = elemsOf(a);
      const eb = elemsOf(b);
      for (let i: u32 = 0; i < n; i++) {
        const c = compare(<usize>load<u32>(ea + (<usize>i << 2)), <usize>load<u32>(eb + (<usize>i << 2)));
        if (c != 0) return c;
      }
      return la < lb ? -1 : la > lb ? 1 : 0;
    }
    case T_OBJECT: {
      const la = lenOf(a);
      const lb = lenOf(b);
      const n = la < lb ? la : lb;
      const ea = elemsOf(a);
      const eb = elemsOf(b);
      for (let i: u32 = 0; i < n; i++) {
        const pa = ea + (<usize>i << 3);
        const pb = eb + (<usize>i << 3);
        let c = compare(<usize>load<u32>(pa), <usize>load<u32>(pb));
        if (c != 0) return c;
        c = compare(<usize>load<u32>(pa, 4), <usize>load<u32>(pb, 4));
        if (c != 0) return c;
      }
      return la < lb ? -1 : la > lb ? 1 : 0;
    }
  }
  fail("illegal value");
  return 0;
}

export function writ_compare(a: usize, b: usize): i32 {
  return compare(a, b);
}

/** 1 if `a` and `b` are equal values (numbers compare numerically: 1 == 1.0). */
export function writ_equal(a: usize, b: usize): i32 {
  if (a == b) return 1;
  if (a == 0 || b == 0) return 0;
  const t = tagOf(a);
  if (t != tagOf(b)) return 0;
  if (t == T_STRING) {
    const n = lenOf(a);
    return n == lenOf(b) && memory.compare(strPtr(a), strPtr(b), n) == 0 ? 1 : 0;
  }
  if (t >= T_ARRAY && lenOf(a) != lenOf(b)) return 0;
  return compare(a, b) == 0 ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Copies

/** A new collection header with its own copy of the item storage; scalars are returned as is. */
export function writ_value_shallow_copy(v: usize): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t < T_ARRAY) return v;
  const size: usize = t == T_OBJECT ? 8 : 4;
  const n = lenOf(v);
  const c = newCollection(t, n, size);
  if (n != 0) memory.copy(elemsOf(c), elemsOf(v), <usize>n * size);
  store<u32>(c, n, OFF_LEN);
  return c;
}

/** A deep copy of all collections (scalars are immutable and shared). */
export function writ_value_deep_copy(v: usize): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t < T_ARRAY) return v;
  const c = writ_value_shallow_copy(v);
  const n = lenOf(c);
  const items = elemsOf(c);
  if (t == T_OBJECT) {
    for (let i: u32 = 0; i < n; i++) {
      const at = items + (<usize>i << 3);
      store<u32>(at, <u32>writ_value_deep_copy(<usize>load<u32>(at, 4)), 4);
    }
  } else {
    // Set elements keep their order when copied, since copies compare equal to the originals.
    for (let i: u32 = 0; i < n; i++) {
      const at = items + (<usize>i << 2);
      store<u32>(at, <u32>writ_value_deep_copy(<usize>load<u32>(at)));
    }
  }
  return c;
}
