// Object builtins: object.get, object.keys, object.union, object.union_n, object.remove,
// object.filter, object.subset.

import { mark, release, calloc } from "../mem";
import {
  FALSE_V,
  T_ARRAY,
  T_OBJECT,
  T_SET,
  TRUE_V,
  appendElem,
  appendEntry,
  compare,
  elemsOf,
  lenOf,
  objectIndex,
  tagOf,
  writ_equal,
  writ_object_get,
  writ_object_with_cap,
  writ_set_get,
  writ_set_with_cap,
  writ_value_get,
} from "../value";
import { isType } from "./util";

@inline
function keyAt(o: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(o) + (<usize>i << 3));
}

@inline
function valueAt(o: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(o) + (<usize>i << 3), 4);
}

@inline
function elemAt(c: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(c) + (<usize>i << 2));
}

/**
 * object.get(o, key, default): o[key], or with an array `key` the value at that path (through objects,
 * array indexes and set elements; the empty path is `o` itself); `default` when there is none.
 */
export function writ_builtin_object_get(o: usize, key: usize, fallback: usize): usize {
  if (!isType(o, T_OBJECT) || key == 0) return 0;
  if (tagOf(key) != T_ARRAY) {
    const v = writ_object_get(o, key);
    return v != 0 ? v : fallback;
  }
  const n = lenOf(key);
  let cur = o;
  for (let i: u32 = 0; i < n && cur != 0; i++) cur = writ_value_get(cur, elemAt(key, i));
  return cur != 0 ? cur : fallback;
}

/** The set of an object's keys. */
export function writ_builtin_object_keys(o: usize): usize {
  if (!isType(o, T_OBJECT)) return 0;
  const n = lenOf(o);
  const r = writ_set_with_cap(n);
  for (let i: u32 = 0; i < n; i++) appendElem(r, keyAt(o, i));
  return r;
}

/** Recursive merge where `b` wins, except that two objects under the same key are merged. */
function mergeOverwrite(a: usize, b: usize): usize {
  const na = lenOf(a);
  const nb = lenOf(b);
  const r = writ_object_with_cap(na + nb);
  let i: u32 = 0;
  let j: u32 = 0;
  while (i < na || j < nb) {
    const c = i >= na ? 1 : j >= nb ? -1 : compare(keyAt(a, i), keyAt(b, j));
    if (c < 0) {
      appendEntry(r, keyAt(a, i), valueAt(a, i));
      i++;
    } else if (c > 0) {
      appendEntry(r, keyAt(b, j), valueAt(b, j));
      j++;
    } else {
      const va = valueAt(a, i);
      const vb = valueAt(b, j);
      const both = tagOf(va) == T_OBJECT && tagOf(vb) == T_OBJECT;
      appendEntry(r, keyAt(a, i), both ? mergeOverwrite(va, vb) : vb);
      i++;
      j++;
    }
  }
  return r;
}

export function writ_builtin_object_union(a: usize, b: usize): usize {
  if (!isType(a, T_OBJECT) || !isType(b, T_OBJECT)) return 0;
  if (writ_equal(a, b)) return a;
  return mergeOverwrite(a, b);
}

/** object.union of an array of objects, left to right. */
export function writ_builtin_object_union_n(arr: usize): usize {
  if (!isType(arr, T_ARRAY)) return 0;
  const n = lenOf(arr);
  for (let i: u32 = 0; i < n; i++) if (!isType(elemAt(arr, i), T_OBJECT)) return 0;
  if (n == 0) return writ_object_with_cap(0);
  let r = elemAt(arr, 0);
  for (let i: u32 = 1; i < n; i++) r = mergeOverwrite(r, elemAt(arr, i));
  return r;
}

@inline const STATIC_MARKS: usize = 1024;
const MARKS: usize = memory.data(STATIC_MARKS);

/**
 * A copy of `o` keeping (keep = 1) or dropping (keep = 0) the entries whose keys are listed in
 * `keys`: an array or set of keys, or an object whose keys are used. `o` itself when nothing changes.
 */
function selectKeys(o: usize, keys: usize, keep: bool): usize {
  if (!isType(o, T_OBJECT) || keys == 0) return 0;
  const t = tagOf(keys);
  if (t != T_ARRAY && t != T_SET && t != T_OBJECT) return 0;
  const n = lenOf(o);
  if (n == 0) return o;
  // Mark the entries of `o` named in `keys` (static marks for small objects, heap scratch otherwise).
  const m = mark();
  let marked = MARKS;
  if (<usize>n <= STATIC_MARKS) memory.fill(MARKS, 0, n);
  else marked = calloc(n);
  const nk = lenOf(keys);
  for (let i: u32 = 0; i < nk; i++) {
    const k = t == T_OBJECT ? keyAt(keys, i) : elemAt(keys, i);
    const at = objectIndex(o, k);
    if (at >= 0) store<u8>(marked + <usize>at, 1);
  }
  let count: u32 = 0;
  for (let i: u32 = 0; i < n; i++) if ((load<u8>(marked + i) != 0) == keep) count++;
  if (count == n) {
    release(m);
    return o;
  }
  const r = writ_object_with_cap(count);
  for (let i: u32 = 0; i < n; i++) {
    if ((load<u8>(marked + i) != 0) == keep) appendEntry(r, keyAt(o, i), valueAt(o, i));
  }
  return r;
}

export function writ_builtin_object_remove(o: usize, keys: usize): usize {
  return selectKeys(o, keys, false);
}

export function writ_builtin_object_filter(o: usize, keys: usize): usize {
  return selectKeys(o, keys, true);
}

/** Every element of set `sub` is in set `sup`. */
function setSubset(sup: usize, sub: usize): bool {
  const n = lenOf(sub);
  for (let i: u32 = 0; i < n; i++) if (writ_set_get(sup, elemAt(sub, i)) == 0) return false;
  return true;
}

/** Array `sub` appears as a contiguous run in array `sup`. */
function arraySubset(sup: usize, sub: usize): bool {
  const ns = lenOf(sub);
  const n = lenOf(sup);
  if (ns > n) return false;
  for (let start: u32 = 0; start + ns <= n; start++) {
    let j: u32 = 0;
    while (j < ns && compare(elemAt(sup, start + j), elemAt(sub, j)) == 0) j++;
    if (j == ns) return true;
  }
  return false;
}

/**
 * Every element of set `sub` occurs in array `sup`. Like OPA, an empty array contains nothing, not
 * even the empty set.
 */
function arraySetSubset(sup: usize, sub: usize): bool {
  const n = lenOf(sup);
  let unmatched = lenOf(sub);
  for (let i: u32 = 0; i < n; i++) {
    if (writ_set_get(sub, elemAt(sup, i)) != 0) unmatched--;
    if (unmatched == 0) return true;
  }
  return false;
}

/** Every key of `sub` is in `sup` with an equal value, or a value that is a subset of it. */
function objectSubset(sup: usize, sub: usize): bool {
  const n = lenOf(sub);
  for (let i: u32 = 0; i < n; i++) {
    const x = writ_object_get(sup, keyAt(sub, i));
    if (x == 0) return false;
    const y = valueAt(sub, i);
    if (writ_equal(x, y)) continue;
    const tx = tagOf(x);
    if (tx != tagOf(y)) return false;
    if (tx == T_OBJECT) {
      if (!objectSubset(x, y)) return false;
    } else if (tx == T_SET) {
      if (!setSubset(x, y)) return false;
    } else if (tx == T_ARRAY) {
      if (!arraySubset(x, y)) return false;
    } else return false;
  }
  return true;
}

/**
 * object.subset(sup, sub): objects recursively, sets by membership, arrays as a contiguous run, and a
 * set within an array by membership. Other combinations: undefined.
 */
export function writ_builtin_object_subset(sup: usize, sub: usize): usize {
  if (sup == 0 || sub == 0) return 0;
  const ta = tagOf(sup);
  const tb = tagOf(sub);
  let r: bool;
  if (ta == T_OBJECT && tb == T_OBJECT) r = objectSubset(sup, sub);
  else if (ta == T_SET && tb == T_SET) r = setSubset(sup, sub);
  else if (ta == T_ARRAY && tb == T_ARRAY) r = arraySubset(sup, sub);
  else if (ta == T_ARRAY && tb == T_SET) r = arraySetSubset(sup, sub);
  else return 0;
  return r ? TRUE_V : FALSE_V;
}
