// Path updates used by generated code: building rule values by reference paths (`p.a.b := v`,
// `p.a contains v`), `with` overrides (upsert into a copy), plus print().
//
// Path inserts never mutate a collection they did not create for the same root: intermediate
// objects (and leaf sets) they create are "owned" by the root (24-byte headers: flag bit 0 of byte 2
// set, owner root address at +16). An existing intermediate that is not owned by the root (e.g. a
// value inserted whole, a constant, data) is shallow-copied into an owned one before it is changed.

import { opa_println } from "./env";
import { malloc, mark, release } from "./mem";
import { opa_value_dump } from "./json";
import {
  OFF_CAP,
  OFF_ELEMS,
  OFF_LEN,
  T_OBJECT,
  T_SET,
  T_STRING,
  elemsOf,
  lenOf,
  objectIndex,
  strPtr,
  tagOf,
  writ_array_append,
  writ_object,
  writ_object_get,
  writ_object_insert,
  writ_object_insert_once,
  writ_set_add,
  writ_value_shallow_copy,
} from "./value";

@inline const FLAG_OWNED: u32 = 1;

function ownedCollection(tag: u32, owner: usize): usize {
  const v = malloc(24);
  store<u32>(v, tag | (FLAG_OWNED << 16));
  store<u32>(v, 0, OFF_LEN);
  store<u32>(v, 0, OFF_CAP);
  store<u32>(v, 0, OFF_ELEMS);
  store<u32>(v, <u32>owner, 16);
  return v;
}

@inline
function ownedBy(v: usize, owner: usize): bool {
  return (<u32>load<u8>(v, 2) & FLAG_OWNED) != 0 && <usize>load<u32>(v, 16) == owner;
}

/** An owned copy of collection `v` (same items). */
function ownedCopy(v: usize, owner: usize): usize {
  const tag = tagOf(v);
  const size: usize = tag == T_OBJECT ? 8 : 4;
  const n = lenOf(v);
  const c = ownedCollection(tag, owner);
  if (n != 0) {
    const items = malloc(<usize>n * size);
    memory.copy(items, elemsOf(v), <usize>n * size);
    store<u32>(c, <u32>items, OFF_ELEMS);
    store<u32>(c, n, OFF_CAP);
    store<u32>(c, n, OFF_LEN);
  }
  return c;
}

@inline
function pathKey(path: usize, i: u32): usize {
  return <usize>load<u32>(elemsOf(path) + (<usize>i << 2));
}

/**
 * Returns the collection of type `tag` at key `k` of `parent` that `root` may mutate, creating it or
 * copying a shared one as needed. Returns 0 if the key holds a value of another type and `strict`.
 */
function ownedChild(parent: usize, k: usize, tag: u32, root: usize, strict: bool): usize {
  const i = objectIndex(parent, k);
  if (i < 0) {
    const child = ownedCollection(tag, root);
    writ_object_insert(parent, k, child);
    return child;
  }
  const slot = elemsOf(parent) + (<usize>i << 3) + 4;
  let child = <usize>load<u32>(slot);
  if (tagOf(child) != tag) {
    if (strict) return 0;
    child = ownedCollection(tag, root);
  } else if (!ownedBy(child, root)) child = ownedCopy(child, root);
  store<u32>(slot, <u32>child);
  return child;
}

/**
 * Sets `root[path[0]]...[path[n-1]] = value` (path: an array of keys). Missing intermediate objects are
 * created, shared ones copied. With `once` = 0 existing values are replaced (a non-object in the middle
 * of the path is replaced by an object). With `once` = 1 it returns 1 (conflict, nothing changed at the
 * leaf) when the leaf holds a different value or a non-object is in the way, like OPA's
 * ObjectInsertOnce. Returns 0 otherwise. An empty path does nothing.
 */
export function writ_object_insert_path(root: usize, path: usize, value: usize, once: i32): i32 {
  const n = lenOf(path);
  if (n == 0) return 0;
  let curr = root;
  for (let i: u32 = 0; i + 1 < n; i++) {
    curr = ownedChild(curr, pathKey(path, i), T_OBJECT, root, once != 0);
    if (curr == 0) return 1;
  }
  const k = pathKey(path, n - 1);
  if (once != 0) return writ_object_insert_once(curr, k, value);
  writ_object_insert(curr, k, value);
  return 0;
}

/**
 * Adds `value` to the set at `root[path...]` (path: an array of keys), creating the set and the
 * intermediate objects as needed (shared ones are copied; a value of another type is replaced).
 */
export function writ_object_set_add_path(root: usize, path: usize, value: usize): void {
  const n = lenOf(path);
  if (n == 0) return;
  let curr = root;
  for (let i: u32 = 0; i + 1 < n; i++) curr = ownedChild(curr, pathKey(path, i), T_OBJECT, root, false);
  writ_set_add(ownedChild(curr, pathKey(path, n - 1), T_SET, root, false), value);
}

/**
 * A copy of `source` with `value` at `path` (an array of keys), for `with` overrides. Objects along the
 * path are shallow-copied (nothing reachable from `source` is mutated); missing or non-object
 * intermediates become new objects; an undefined or non-object `source` starts from `{}`.
 * An empty path yields `value`.
 */
export function writ_upsert(source: usize, path: usize, value: usize): usize {
  const n = lenOf(path);
  if (n == 0) return value;
  const root = source != 0 && tagOf(source) == T_OBJECT ? writ_value_shallow_copy(source) : writ_object();
  let curr = root;
  for (let i: u32 = 0; i + 1 < n; i++) {
    const k = pathKey(path, i);
    const old = writ_object_get(curr, k);
    const child = old != 0 && tagOf(old) == T_OBJECT ? writ_value_shallow_copy(old) : writ_object();
    writ_object_insert(curr, k, child);
    curr = child;
  }
  writ_object_insert(curr, pathKey(path, n - 1), value);
  return root;
}

/** Appends `v` to `arr` and returns `arr` (for building arrays inside one expression). */
export function writ_array_appended(arr: usize, v: usize): usize {
  writ_array_append(arr, v);
  return arr;
}

/** Number of print positions of an argument: a set's elements (at least one), else the value itself. */
function printCount(arg: usize): u32 {
  if (tagOf(arg) != T_SET) return 1;
  const n = lenOf(arg);
  return n == 0 ? 1 : n;
}

/**
 * print(): `args` is an array with one set per argument (the values it took). Prints one line per
 * combination of elements (OPA's cross product), arguments separated by spaces; strings print raw,
 * other values in Rego value syntax, an empty set as `<undefined>`. A non-set argument prints as
 * itself (newer OPA versions pass primitive operands directly).
 */
export function writ_print(args: usize): void {
  const n = lenOf(args);
  const m = mark();
  const idx = malloc((<usize>n << 2) + 4);
  memory.fill(idx, 0, (<usize>n << 2) + 4);
  while (true) {
    const lineMark = mark();
    printLine(args, n, idx);
    release(lineMark);
    // Advance the odometer; empty sets count as a single "<undefined>" position.
    let j: i32 = <i32>n - 1;
    while (j >= 0) {
      const size = printCount(pathKey(args, <u32>j));
      const at = idx + (<usize>j << 2);
      const next = load<u32>(at) + 1;
      if (next < size) {
        store<u32>(at, next);
        break;
      }
      store<u32>(at, 0);
      j--;
    }
    if (j < 0) break;
  }
  release(m);
}

@inline const UNDEFINED_TEXT: u64 = 0x3e64656e69666564; // "defined>" after "<un"

function printLine(args: usize, n: u32, idx: usize): void {
  // Measure and collect the pieces (value dumps are allocated as we go), then join them.
  const pieces = malloc((<usize>n << 3) + 8);
  let total: usize = 0;
  for (let j: u32 = 0; j < n; j++) {
    const arg = pathKey(args, j);
    let ptr: usize = 0;
    let len: usize = 0;
    const isSet = tagOf(arg) == T_SET;
    if (!isSet || lenOf(arg) != 0) {
      const e = isSet ? <usize>load<u32>(elemsOf(arg) + (<usize>load<u32>(idx + (<usize>j << 2)) << 2)) : arg;
      if (tagOf(e) == T_STRING) {
        ptr = strPtr(e);
        len = lenOf(e);
      } else {
        ptr = opa_value_dump(e);
        while (load<u8>(ptr + len) != 0) len++;
      }
    }
    store<u32>(pieces + (<usize>j << 3), <u32>ptr);
    store<u32>(pieces + (<usize>j << 3), <u32>len, 4);
    total += (ptr == 0 ? 11 : len) + 1;
  }
  const line = malloc(total + 1);
  let p = line;
  for (let j: u32 = 0; j < n; j++) {
    if (j > 0) store<u8>(p++, 32);
    const ptr = <usize>load<u32>(pieces + (<usize>j << 3));
    const len = <usize>load<u32>(pieces + (<usize>j << 3), 4);
    if (ptr == 0) {
      store<u8>(p, 60); // '<'
      store<u8>(p, 117, 1); // 'u'
      store<u8>(p, 110, 2); // 'n'
      store<u64>(p + 3, UNDEFINED_TEXT);
      p += 11;
    } else {
      memory.copy(p, ptr, len);
      p += len;
    }
  }
  store<u8>(p, 0);
  opa_println(line);
}
