// Entry file of Writ's Wasm runtime. Everything exported here is a Wasm export of runtime.wasm:
// the OPA ABI (opa_*, eval, builtins, entrypoints, the two version globals) and the internal API
// (writ_*) that generated code calls. The linker keeps only the ABI exports in the final module.
// The contract is documented in ../README.md.

export const opa_wasm_abi_version: i32 = 1;
export const opa_wasm_abi_minor_version: i32 = 3;

export {
  heapPtr as writ_heap_ptr,
  opa_free,
  opa_heap_blocks_restore,
  opa_heap_blocks_stash,
  opa_heap_ptr_get,
  opa_heap_ptr_set,
  opa_heap_stash_clear,
  opa_malloc,
} from "./mem";

export { writ_abort_bytes, writ_error_at } from "./abort";

export {
  builtins,
  entrypoints,
  evalCtx as eval,
  opa_eval,
  opa_eval_ctx_get_result,
  opa_eval_ctx_new,
  opa_eval_ctx_set_data,
  opa_eval_ctx_set_entrypoint,
  opa_eval_ctx_set_input,
  opa_value_add_path,
  opa_value_free,
  opa_value_remove_path,
  writ_call_builtin0,
  writ_call_builtin1,
  writ_call_builtin2,
  writ_call_builtin3,
  writ_call_builtin4,
  writ_ctx_data,
  writ_ctx_entrypoint,
  writ_ctx_input,
  writ_object_merge,
  writ_println,
  writ_result_add,
  writ_result_add_bindings,
  writ_result_key,
} from "./eval";

export {
  writ_array_appended,
  writ_object_insert_path,
  writ_object_set_add_path,
  writ_print,
  writ_upsert,
} from "./paths";

export { opa_json_dump, opa_json_parse, opa_value_dump, opa_value_parse, writ_parse_string, writ_to_json_string } from "./json";

export {
  writ_decimal_compare,
  writ_number_decimal,
  writ_number_float,
  writ_number_from_decimal,
  writ_number_int,
  writ_number_is_int,
  writ_number_kind,
  writ_number_ref,
  writ_number_to_f64,
  writ_number_to_i64,
} from "./number";

export {
  writ_array,
  writ_array_append,
  writ_array_get,
  writ_array_set,
  writ_boolean,
  writ_compare,
  writ_equal,
  writ_is_true,
  writ_key_at,
  writ_length,
  writ_null,
  writ_object,
  writ_object_get,
  writ_object_insert,
  writ_object_insert_once,
  writ_object_remove,
  writ_object_with_cap,
  writ_set,
  writ_set_add,
  writ_set_get,
  writ_set_remove,
  writ_set_with_cap,
  writ_string,
  writ_string_copy,
  writ_truthy,
  writ_type,
  writ_value_at,
  writ_value_deep_copy,
  writ_value_get,
  writ_value_shallow_copy,
} from "./value";

// Native Rego builtins: `writ_builtin_<name>` with dots replaced by underscores (see ../README.md).
export {
  writ_builtin_abs,
  writ_builtin_ceil,
  writ_builtin_div,
  writ_builtin_floor,
  writ_builtin_minus,
  writ_builtin_mul,
  writ_builtin_numbers_range,
  writ_builtin_numbers_range_step,
  writ_builtin_plus,
  writ_builtin_rem,
  writ_builtin_round,
} from "./builtins/numbers";

export {
  writ_builtin_count,
  writ_builtin_internal_member_2,
  writ_builtin_internal_member_3,
  writ_builtin_max,
  writ_builtin_min,
  writ_builtin_product,
  writ_builtin_sort,
  writ_builtin_sum,
} from "./builtins/aggregates";

export { writ_builtin_and, writ_builtin_intersection, writ_builtin_or, writ_builtin_union } from "./builtins/sets";

export {
  writ_builtin_array_concat,
  writ_builtin_array_flatten,
  writ_builtin_array_reverse,
  writ_builtin_array_slice,
} from "./builtins/arrays";

export {
  writ_builtin_object_filter,
  writ_builtin_object_get,
  writ_builtin_object_keys,
  writ_builtin_object_remove,
  writ_builtin_object_subset,
  writ_builtin_object_union,
  writ_builtin_object_union_n,
} from "./builtins/objects";

export {
  writ_builtin_concat,
  writ_builtin_contains,
  writ_builtin_endswith,
  writ_builtin_format_int,
  writ_builtin_indexof,
  writ_builtin_indexof_n,
  writ_builtin_lower,
  writ_builtin_replace,
  writ_builtin_split,
  writ_builtin_startswith,
  writ_builtin_strings_any_prefix_match,
  writ_builtin_strings_any_suffix_match,
  writ_builtin_strings_count,
  writ_builtin_strings_replace_n,
  writ_builtin_strings_reverse,
  writ_builtin_strings_split_n,
  writ_builtin_substring,
  writ_builtin_trim,
  writ_builtin_trim_left,
  writ_builtin_trim_prefix,
  writ_builtin_trim_right,
  writ_builtin_trim_space,
  writ_builtin_trim_suffix,
  writ_builtin_upper,
} from "./builtins/strings";

export {
  writ_builtin_is_array,
  writ_builtin_is_boolean,
  writ_builtin_is_null,
  writ_builtin_is_number,
  writ_builtin_is_object,
  writ_builtin_is_set,
  writ_builtin_is_string,
  writ_builtin_to_number,
  writ_builtin_type_name,
} from "./builtins/types";

export {
  writ_builtin_base64_decode,
  writ_builtin_base64_encode,
  writ_builtin_base64url_decode,
  writ_builtin_base64url_encode,
  writ_builtin_base64url_encode_no_pad,
  writ_builtin_json_marshal,
  writ_builtin_json_unmarshal,
} from "./builtins/encoding";
