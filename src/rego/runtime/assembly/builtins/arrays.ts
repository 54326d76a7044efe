// Array builtins: array.concat, array.slice, array.reverse, array.flatten.

import { numberI64Ok, numberToI64 } from "../number";
import { T_ARRAY, T_NUMBER, elemsOf, lenOf, tagOf, writ_array } from "../value";
import { isType } from "./util";

/** A new array holding `n` elements copied from `src`. */
function arrayOf(src: usize, n: u32): usize {
  const r = writ_array(n);
  if (n != 0) memory.copy(elemsOf(r), src, <usize>n << 2);
  store<u32>(r, n, 4);
  return r;
}

export function writ_builtin_array_concat(a: usize, b: usize): usize {
  if (!isType(a, T_ARRAY) || !isType(b, T_ARRAY)) return 0;
  const na = lenOf(a);
  const nb = lenOf(b);
  const r = writ_array(na + nb);
  const items = elemsOf(r);
  if (na != 0) memory.copy(items, elemsOf(a), <usize>na << 2);
  if (nb != 0) memory.copy(items + (<usize>na << 2), elemsOf(b), <usize>nb << 2);
  store<u32>(r, na + nb, 4);
  return r;
}

/** a[start:stop] with both indices clamped to [0, len] and start to at most stop (OPA's behavior). */
export function writ_builtin_array_slice(a: usize, startValue: usize, stopValue: usize): usize {
  if (!isType(a, T_ARRAY) || !isType(startValue, T_NUMBER) || !isType(stopValue, T_NUMBER)) return 0;
  let start = numberToI64(startValue);
  if (!numberI64Ok()) return 0;
  let stop = numberToI64(stopValue);
  if (!numberI64Ok()) return 0;
  const n = <i64>lenOf(a);
  if (stop < 0) stop = 0;
  else if (stop > n) stop = n;
  if (start < 0) start = 0;
  else if (start > stop) start = stop;
  return arrayOf(elemsOf(a) + (<usize>start << 2), <u32>(stop - start));
}

export function writ_builtin_array_reverse(a: usize): usize {
  if (!isType(a, T_ARRAY)) return 0;
  const n = lenOf(a);
  const r = writ_array(n);
  const src = elemsOf(a);
  const dst = elemsOf(r);
  for (let i: u32 = 0; i < n; i++) store<u32>(dst + (<usize>i << 2), load<u32>(src + (<usize>(n - 1 - i) << 2)));
  store<u32>(r, n, 4);
  return r;
}

/** One level of flattening: elements that are arrays are replaced by their elements. */
export function writ_builtin_array_flatten(a: usize): usize {
  if (!isType(a, T_ARRAY)) return 0;
  const n = lenOf(a);
  const src = elemsOf(a);
  let total: u32 = 0;
  for (let i: u32 = 0; i < n; i++) {
    const e = <usize>load<u32>(src + (<usize>i << 2));
    total += tagOf(e) == T_ARRAY ? lenOf(e) : 1;
  }
  const r = writ_array(total);
  let dst = elemsOf(r);
  for (let i: u32 = 0; i < n; i++) {
    const e = <usize>load<u32>(src + (<usize>i << 2));
    if (tagOf(e) == T_ARRAY) {
      const m = lenOf(e);
      if (m != 0) memory.copy(dst, elemsOf(e), <usize>m << 2);
      dst += <usize>m << 2;
    } else {
      store<u32>(dst, <u32>e);
      dst += 4;
    }
  }
  store<u32>(r, total, 4);
  return r;
}
