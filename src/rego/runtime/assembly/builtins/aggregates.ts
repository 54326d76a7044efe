// Aggregate builtins: count, sum, product, max, min, sort, and the membership operators behind
// `x in xs` (internal.member_2) and `k, v in xs` (internal.member_3).

import { writ_number_int } from "../number";
import {
  FALSE_V,
  T_ARRAY,
  T_OBJECT,
  T_SET,
  T_STRING,
  TRUE_V,
  compare,
  elemsOf,
  lenOf,
  sortValues,
  strPtr,
  tagOf,
  writ_array,
  writ_equal,
  writ_set_get,
  writ_value_get,
} from "../value";
import { productOf, sumOf } from "./numbers";
import { runeCount } from "./util";

/** 1 if `v` is an array or a set (the collections sum, max, sort, ... accept). */
@inline
function isArrayOrSet(v: usize): bool {
  if (v == 0) return false;
  const t = tagOf(v);
  return t == T_ARRAY || t == T_SET;
}

@inline
function elemAt(c: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(c) + (<usize>i << 2));
}

/** Elements of arrays, objects and sets; code points of strings (each invalid UTF-8 byte counts one). */
export function writ_builtin_count(v: usize): usize {
  if (v == 0) return 0;
  const t = tagOf(v);
  if (t == T_STRING) return writ_number_int(<i64>runeCount(strPtr(v), lenOf(v)));
  if (t >= T_ARRAY) return writ_number_int(<i64>lenOf(v));
  return 0;
}

export function writ_builtin_sum(c: usize): usize {
  return isArrayOrSet(c) ? sumOf(c) : 0;
}

export function writ_builtin_product(c: usize): usize {
  return isArrayOrSet(c) ? productOf(c) : 0;
}

/** Largest element by OPA's order; undefined for an empty collection. */
export function writ_builtin_max(c: usize): usize {
  if (!isArrayOrSet(c)) return 0;
  const n = lenOf(c);
  if (n == 0) return 0;
  if (tagOf(c) == T_SET) return elemAt(c, n - 1);
  let best = elemAt(c, 0);
  for (let i: u32 = 1; i < n; i++) {
    const x = elemAt(c, i);
    if (compare(best, x) <= 0) best = x;
  }
  return best;
}

/** Smallest element by OPA's order; undefined for an empty collection. */
export function writ_builtin_min(c: usize): usize {
  if (!isArrayOrSet(c)) return 0;
  const n = lenOf(c);
  if (n == 0) return 0;
  if (tagOf(c) == T_SET) return elemAt(c, 0);
  let best = elemAt(c, 0);
  for (let i: u32 = 1; i < n; i++) {
    const x = elemAt(c, i);
    if (compare(best, x) >= 0) best = x;
  }
  return best;
}

/** A sorted array of the elements of an array or set. */
export function writ_builtin_sort(c: usize): usize {
  if (!isArrayOrSet(c)) return 0;
  const n = lenOf(c);
  const r = writ_array(n);
  if (n == 0) return r;
  memory.copy(elemsOf(r), elemsOf(c), <usize>n << 2);
  store<u32>(r, n, 4);
  if (tagOf(c) == T_ARRAY) sortValues(elemsOf(r), n);
  return r;
}

/** `x in c`: an element of a set or array, a value of an object. Other collections: false. */
export function writ_builtin_internal_member_2(x: usize, c: usize): usize {
  if (x == 0 || c == 0) return 0;
  const t = tagOf(c);
  if (t == T_SET) return writ_set_get(c, x) != 0 ? TRUE_V : FALSE_V;
  if (t == T_ARRAY) {
    const n = lenOf(c);
    for (let i: u32 = 0; i < n; i++) if (writ_equal(elemAt(c, i), x)) return TRUE_V;
    return FALSE_V;
  }
  if (t == T_OBJECT) {
    const n = lenOf(c);
    const items = elemsOf(c);
    for (let i: u32 = 0; i < n; i++) if (writ_equal(<usize>load<u32>(items + (<usize>i << 3), 4), x)) return TRUE_V;
  }
  return FALSE_V;
}

/**
 * `k, v in c`: `c[k] == v` for arrays (k an index) and objects (k a key); for sets, `k` is an element
 * equal to `v`. Other collections: false.
 */
export function writ_builtin_internal_member_3(k: usize, v: usize, c: usize): usize {
  if (k == 0 || v == 0 || c == 0) return 0;
  const t = tagOf(c);
  if (t == T_SET) return writ_set_get(c, k) != 0 && writ_equal(k, v) ? TRUE_V : FALSE_V;
  if (t == T_ARRAY || t == T_OBJECT) return writ_equal(writ_value_get(c, k), v) ? TRUE_V : FALSE_V;
  return FALSE_V;
}
