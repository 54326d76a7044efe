// Set builtins: and (&), or (|), intersection, union, and the difference used by minus. Sets are
// sorted, so each operation is a linear merge that appends its result in order.

import { T_SET, appendElem, compare, elemsOf, finishSet, lenOf, writ_set_with_cap } from "../value";
import { isType } from "./util";

@inline
function elemAt(s: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(s) + (<usize>i << 2));
}

@inline const KEEP_BOTH: i32 = 0; // union
@inline const KEEP_COMMON: i32 = 1; // intersection
@inline const KEEP_LEFT_ONLY: i32 = 2; // difference

/** Merges two sets: their union, intersection or difference (a new set). */
function mergeSets(a: usize, b: usize, mode: i32): usize {
  const na = lenOf(a);
  const nb = lenOf(b);
  const cap = mode == KEEP_BOTH ? na + nb : mode == KEEP_COMMON ? (na < nb ? na : nb) : na;
  const r = writ_set_with_cap(cap);
  let i: u32 = 0;
  let j: u32 = 0;
  while (i < na && j < nb) {
    const x = elemAt(a, i);
    const y = elemAt(b, j);
    const c = compare(x, y);
    if (c < 0) {
      if (mode != KEEP_COMMON) appendElem(r, x);
      i++;
    } else if (c > 0) {
      if (mode == KEEP_BOTH) appendElem(r, y);
      j++;
    } else {
      if (mode != KEEP_LEFT_ONLY) appendElem(r, x);
      i++;
      j++;
    }
  }
  if (mode != KEEP_COMMON) for (; i < na; i++) appendElem(r, elemAt(a, i));
  if (mode == KEEP_BOTH) for (; j < nb; j++) appendElem(r, elemAt(b, j));
  return r;
}

/** Elements of set `a` that are not in set `b`. */
export function setDifference(a: usize, b: usize): usize {
  return mergeSets(a, b, KEEP_LEFT_ONLY);
}

export function writ_builtin_and(a: usize, b: usize): usize {
  if (!isType(a, T_SET) || !isType(b, T_SET)) return 0;
  return mergeSets(a, b, KEEP_COMMON);
}

export function writ_builtin_or(a: usize, b: usize): usize {
  if (!isType(a, T_SET) || !isType(b, T_SET)) return 0;
  return mergeSets(a, b, KEEP_BOTH);
}

/** 1 if every element of `s` is a set. */
function allSets(s: usize): bool {
  const n = lenOf(s);
  for (let i: u32 = 0; i < n; i++) if (!isType(elemAt(s, i), T_SET)) return false;
  return true;
}

/** intersection(set of sets); the empty set for no sets. */
export function writ_builtin_intersection(s: usize): usize {
  if (!isType(s, T_SET) || !allSets(s)) return 0;
  const n = lenOf(s);
  if (n == 0) return writ_set_with_cap(0);
  let r = elemAt(s, 0);
  for (let i: u32 = 1; i < n; i++) r = mergeSets(r, elemAt(s, i), KEEP_COMMON);
  return r;
}

/** union(set of sets). */
export function writ_builtin_union(s: usize): usize {
  if (!isType(s, T_SET) || !allSets(s)) return 0;
  const n = lenOf(s);
  if (n == 1) return elemAt(s, 0);
  if (n == 2) return mergeSets(elemAt(s, 0), elemAt(s, 1), KEEP_BOTH);
  // Many sets: gather every element once, then sort and drop duplicates in one pass.
  let total: u32 = 0;
  for (let i: u32 = 0; i < n; i++) total += lenOf(elemAt(s, i));
  const r = writ_set_with_cap(total);
  for (let i: u32 = 0; i < n; i++) {
    const x = elemAt(s, i);
    const m = lenOf(x);
    for (let j: u32 = 0; j < m; j++) appendElem(r, elemAt(x, j));
  }
  finishSet(r);
  return r;
}
