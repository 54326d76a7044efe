// Evaluation contexts, the opa_eval fast path, result sets and data-document updates.
//
// Context layout (16 bytes): +0 input value, +4 data value, +8 result set, +12 entrypoint id (i32).

import { fail } from "./abort";
import {
  opa_builtin0,
  opa_builtin1,
  opa_builtin2,
  opa_builtin3,
  opa_builtin4,
  opa_println,
  writ_builtins,
  writ_entrypoints,
  writ_eval_ctx,
} from "./env";
import { opa_json_dump, opa_value_dump, opa_value_parse } from "./json";
import { calloc, malloc, mark, opa_heap_ptr_set, release } from "./mem";
import {
  OFF_LEN,
  OFF_STR_PTR,
  T_ARRAY,
  T_OBJECT,
  T_STRING,
  appendEntry,
  compare,
  elemsOf,
  lenOf,
  tagOf,
  writ_equal,
  writ_object,
  writ_object_insert,
  writ_object_remove,
  writ_object_with_cap,
  writ_set,
  writ_set_add,
  writ_value_get,
} from "./value";

@inline export const CTX_INPUT: usize = 0;
@inline export const CTX_DATA: usize = 4;
@inline export const CTX_RESULT: usize = 8;
@inline export const CTX_ENTRYPOINT: usize = 12;

export function opa_eval_ctx_new(): usize {
  return calloc(16);
}

export function opa_eval_ctx_set_input(ctx: usize, v: usize): void {
  store<u32>(ctx, <u32>v, CTX_INPUT);
}

export function opa_eval_ctx_set_data(ctx: usize, v: usize): void {
  store<u32>(ctx, <u32>v, CTX_DATA);
}

export function opa_eval_ctx_set_entrypoint(ctx: usize, id: i32): void {
  store<i32>(ctx, id, CTX_ENTRYPOINT);
}

/** The result set of the last evaluation with `ctx` (an empty set when nothing was added). */
export function opa_eval_ctx_get_result(ctx: usize): usize {
  let rs = <usize>load<u32>(ctx, CTX_RESULT);
  if (rs == 0) {
    rs = writ_set();
    store<u32>(ctx, <u32>rs, CTX_RESULT);
  }
  return rs;
}

export function writ_ctx_input(ctx: usize): usize {
  return <usize>load<u32>(ctx, CTX_INPUT);
}

export function writ_ctx_data(ctx: usize): usize {
  return <usize>load<u32>(ctx, CTX_DATA);
}

export function writ_ctx_entrypoint(ctx: usize): i32 {
  return load<i32>(ctx, CTX_ENTRYPOINT);
}

/** `eval(ctx)` export: runs the generated evaluation for the context's entrypoint. Returns 0. */
export function evalCtx(ctx: usize): i32 {
  writ_eval_ctx(ctx);
  return 0;
}

/**
 * ABI 1.2 one-shot evaluation: resets the heap to `heap`, parses `inputLen` bytes of input at `input`
 * (none when 0; set literals allowed; invalid text aborts), evaluates `entrypoint` against `data`, and
 * returns the NUL-terminated result set text (format 0 JSON, 1 Rego value syntax).
 */
export function opa_eval(
  reserved: usize,
  entrypoint: i32,
  data: usize,
  input: usize,
  inputLen: usize,
  heap: usize,
  format: i32,
): usize {
  if (reserved != 0) fail("invalid reserved argument");
  opa_heap_ptr_set(heap);
  let inputValue: usize = 0;
  if (inputLen != 0) {
    inputValue = opa_value_parse(input, inputLen);
    if (inputValue == 0) fail("invalid input: not a JSON value");
  }
  const ctx = calloc(16);
  store<u32>(ctx, <u32>inputValue, CTX_INPUT);
  store<u32>(ctx, <u32>data, CTX_DATA);
  store<i32>(ctx, entrypoint, CTX_ENTRYPOINT);
  writ_eval_ctx(ctx);
  const rs = opa_eval_ctx_get_result(ctx);
  return format == 1 ? opa_value_dump(rs) : opa_json_dump(rs);
}

export function entrypoints(): usize {
  return writ_entrypoints();
}

export function builtins(): usize {
  return writ_builtins();
}

// ---------------------------------------------------------------------------------------------
// Result sets

const RESULT_BYTES: usize = memory.data<u8>([114, 101, 115, 117, 108, 116]); // "result"
const RESULT_KEY: usize = memory.data(16, 8);

/** The interned string value "result". */
export function writ_result_key(): usize {
  store<u32>(RESULT_KEY, T_STRING);
  store<u32>(RESULT_KEY, 6, OFF_LEN);
  store<u32>(RESULT_KEY, <u32>RESULT_BYTES, OFF_STR_PTR);
  return RESULT_KEY;
}

/** Adds the binding object `{"result": v}` to the context's result set. */
export function writ_result_add(ctx: usize, v: usize): void {
  const o = writ_object_with_cap(1);
  writ_object_insert(o, writ_result_key(), v);
  writ_result_add_bindings(ctx, o);
}

/** Adds an arbitrary bindings object (variable name -> value) to the context's result set. */
export function writ_result_add_bindings(ctx: usize, bindings: usize): void {
  let rs = <usize>load<u32>(ctx, CTX_RESULT);
  if (rs == 0) {
    rs = writ_set();
    store<u32>(ctx, <u32>rs, CTX_RESULT);
  }
  writ_set_add(rs, bindings);
}

// ---------------------------------------------------------------------------------------------
// Data documents

@inline const OPA_ERR_OK: i32 = 0;
@inline const OPA_ERR_INVALID_TYPE: i32 = 2;
@inline const OPA_ERR_INVALID_PATH: i32 = 3;

/** Path length if `path` is a non-empty array of strings, else -1. */
function pathLength(path: usize): i32 {
  if (path == 0 || tagOf(path) != T_ARRAY) return -1;
  const n = lenOf(path);
  if (n == 0) return -1;
  const items = elemsOf(path);
  for (let i: u32 = 0; i < n; i++) {
    if (tagOf(<usize>load<u32>(items + (<usize>i << 2))) != T_STRING) return -1;
  }
  return <i32>n;
}

/**
 * Sets `value` at `path` (array of strings) inside object `base`, creating missing objects on the way
 * and replacing an existing value. Returns 0 (ok), 2 (a non-object on the path), 3 (invalid path).
 */
export function opa_value_add_path(base: usize, path: usize, value: usize): i32 {
  const n = pathLength(path);
  if (n < 1) return OPA_ERR_INVALID_PATH;
  const items = elemsOf(path);
  let curr = base;
  for (let i: i32 = 0; i < n - 1; i++) {
    const k = <usize>load<u32>(items + (<usize>i << 2));
    if (curr == 0 || tagOf(curr) != T_OBJECT) return OPA_ERR_INVALID_TYPE;
    let next = writ_value_get(curr, k);
    if (next == 0) {
      next = writ_object();
      writ_object_insert(curr, k, next);
    }
    curr = next;
  }
  if (curr == 0 || tagOf(curr) != T_OBJECT) return OPA_ERR_INVALID_TYPE;
  writ_object_insert(curr, <usize>load<u32>(items + (<usize>(n - 1) << 2)), value);
  return OPA_ERR_OK;
}

/** Removes the value at `path` from object `base` (a missing path is fine). Returns 0, 2 or 3 as above. */
export function opa_value_remove_path(base: usize, path: usize): i32 {
  const n = pathLength(path);
  if (n < 1) return OPA_ERR_INVALID_PATH;
  const items = elemsOf(path);
  let curr = base;
  for (let i: i32 = 0; i < n - 1; i++) {
    if (curr == 0 || tagOf(curr) != T_OBJECT) return OPA_ERR_INVALID_TYPE;
    curr = writ_value_get(curr, <usize>load<u32>(items + (<usize>i << 2)));
    if (curr == 0) return OPA_ERR_OK;
  }
  if (tagOf(curr) != T_OBJECT) return OPA_ERR_INVALID_TYPE;
  writ_object_remove(curr, <usize>load<u32>(items + (<usize>(n - 1) << 2)));
  return OPA_ERR_OK;
}

/** ABI 1.3 opa_value_free: values live on the bump heap and are reclaimed by opa_heap_ptr_set. */
export function opa_value_free(v: usize): void {}

/**
 * Deep merge of two objects into a new object (inputs are not modified). Keys present in both merge
 * recursively when both values are objects. Otherwise, mode 0 keeps `a`'s value (OPA's
 * opa_value_merge), mode 1 requires the two values to be equal and returns 0 (conflict) if not.
 * Non-object arguments: mode 0 returns `a`, mode 1 returns `a` if equal to `b`, else 0.
 * An undefined (0) argument yields the other one.
 */
export function writ_object_merge(a: usize, b: usize, mode: i32): usize {
  if (a == 0) return b;
  if (b == 0) return a;
  if (tagOf(a) != T_OBJECT || tagOf(b) != T_OBJECT) {
    if (mode == 0 || writ_equal(a, b)) return a;
    return 0;
  }
  const na = lenOf(a);
  const nb = lenOf(b);
  const ea = elemsOf(a);
  const eb = elemsOf(b);
  const r = writ_object_with_cap(na + nb);
  let i: u32 = 0;
  let j: u32 = 0;
  while (i < na || j < nb) {
    if (j >= nb) {
      appendEntry(r, <usize>load<u32>(ea + (<usize>i << 3)), <usize>load<u32>(ea + (<usize>i << 3), 4));
      i++;
      continue;
    }
    if (i >= na) {
      appendEntry(r, <usize>load<u32>(eb + (<usize>j << 3)), <usize>load<u32>(eb + (<usize>j << 3), 4));
      j++;
      continue;
    }
    const ka = <usize>load<u32>(ea + (<usize>i << 3));
    const kb = <usize>load<u32>(eb + (<usize>j << 3));
    const c = compare(ka, kb);
    if (c < 0) {
      appendEntry(r, ka, <usize>load<u32>(ea + (<usize>i << 3), 4));
      i++;
    } else if (c > 0) {
      appendEntry(r, kb, <usize>load<u32>(eb + (<usize>j << 3), 4));
      j++;
    } else {
      const m = writ_object_merge(
        <usize>load<u32>(ea + (<usize>i << 3), 4),
        <usize>load<u32>(eb + (<usize>j << 3), 4),
        mode,
      );
      if (m == 0) return 0;
      appendEntry(r, ka, m);
      i++;
      j++;
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Host calls

/** Prints `len` UTF-8 bytes through env.opa_println. */
export function writ_println(ptr: usize, len: usize): void {
  const m = mark();
  const s = malloc(len + 1);
  memory.copy(s, ptr, len);
  store<u8>(s + len, 0);
  opa_println(s);
  release(m);
}

// Thin wrappers that keep the host builtin imports in the module; generated code may call either
// these or the imports directly (both are listed in RuntimeSymbols).
export function writ_call_builtin0(id: i32, ctx: usize): usize {
  return opa_builtin0(id, ctx);
}
export function writ_call_builtin1(id: i32, ctx: usize, a: usize): usize {
  return opa_builtin1(id, ctx, a);
}
export function writ_call_builtin2(id: i32, ctx: usize, a: usize, b: usize): usize {
  return opa_builtin2(id, ctx, a, b);
}
export function writ_call_builtin3(id: i32, ctx: usize, a: usize, b: usize, c: usize): usize {
  return opa_builtin3(id, ctx, a, b, c);
}
export function writ_call_builtin4(id: i32, ctx: usize, a: usize, b: usize, c: usize, d: usize): usize {
  return opa_builtin4(id, ctx, a, b, c, d);
}
