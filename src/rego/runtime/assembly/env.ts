// Host imports. Only the `env` functions below exist in the final module: the SDK supplies them.
// The `writ` imports are placeholders that the linker (src/rego/wasm/link.ts) replaces with
// functions generated from the policy, so a linked module never imports anything from `writ`.

@external("env", "opa_abort")
export declare function opa_abort(addr: usize): void;

@external("env", "opa_println")
export declare function opa_println(addr: usize): void;

@external("env", "opa_builtin0")
export declare function opa_builtin0(id: i32, ctx: usize): usize;

@external("env", "opa_builtin1")
export declare function opa_builtin1(id: i32, ctx: usize, a: usize): usize;

@external("env", "opa_builtin2")
export declare function opa_builtin2(id: i32, ctx: usize, a: usize, b: usize): usize;

@external("env", "opa_builtin3")
export declare function opa_builtin3(id: i32, ctx: usize, a: usize, b: usize, c: usize): usize;

@external("env", "opa_builtin4")
export declare function opa_builtin4(id: i32, ctx: usize, a: usize, b: usize, c: usize, d: usize): usize;

/** Evaluates the entrypoint selected in the context (generated: dispatch over entrypoint ids). */
@external("writ", "eval_ctx")
export declare function writ_eval_ctx(ctx: usize): void;

/** Returns the value `{"<entrypoint>": id, ...}` (generated: a static constant). */
@external("writ", "entrypoints")
export declare function writ_entrypoints(): usize;

/** Returns the value `{"<builtin>": id, ...}` (generated: a static constant). */
@external("writ", "builtins")
export declare function writ_builtins(): usize;
