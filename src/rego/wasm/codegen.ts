/**
 * Code generation: IR functions (see `../plan/ir.ts`) to WebAssembly functions appended to the
 * runtime module by the linker.
 *
 * Every IR local is a wasm i32 local holding a value address (0 = undefined). Failure scopes are
 * wasm blocks: a failing statement branches to the end of the innermost one; a `scan` is a loop
 * whose body is its own block, so failing there moves on to the next element.
 *
 * Memoized functions keep their last value and the memo epoch it was computed in, in two globals;
 * every evaluation and every `with` body starts a new epoch.
 */
import binaryen from "binaryen";
import { lookupBuiltin } from "../builtins/catalog.ts";
import { RegoError } from "../errors.ts";
import { BUDGET_BUILTIN, hasHostBuiltin, hostImportName } from "../host/index.ts";
import {
  CONFLICT_ERROR_CODE,
  type ErrorSite,
  type IRFunction,
  type IRPlan,
  type Local,
  type Operand,
  type Stmt,
} from "../plan/ir.ts";
import type { Linker, RuntimeSymbolName } from "./link.ts";

const i32 = binaryen.i32;

/** Value type tags of the runtime (see src/rego/runtime/README.md). */
const T_ARRAY = 5;
const T_OBJECT = 6;
const _T_SET = 7;
const T_STRING = 4;

const EPOCH = "writ_memo_epoch";
const EPOCH_COUNTER = "writ_memo_epoch_counter";
const CURRENT_CTX = "writ_current_ctx";

/** How a builtin is reached from generated code. */
type BuiltinCall =
  | { kind: "runtime"; func: string }
  | { kind: "host"; id: number; arity: number }
  | { kind: "inline"; emit: (args: binaryen.ExpressionRef[]) => binaryen.ExpressionRef };

export interface CodegenOptions {
  /** Runtime function implementing a native builtin, if the runtime has one. */
  nativeBuiltin: (name: string) => string | undefined;
  /**
   * Strict builtin errors: a builtin that raises an error aborts the evaluation with OPA's code
   * (`eval_type_error`, `eval_builtin_error`) instead of being undefined.
   */
  strictBuiltinErrors?: boolean;
  /**
   * Calls the budget host builtin when the module's fuel runs out (`meter.ts`), so a host can
   * stop the evaluation at its deadline (default false: a host need not implement that builtin,
   * and nothing stops a long evaluation but its end).
   */
  budget?: boolean;
}

export class CodeGenerator {
  private readonly m: binaryen.Module;
  private readonly funcIndex = new Map<string, IRFunction>();
  private readonly wasmNames = new Map<string, string>();
  private readonly hostBuiltins = new Map<string, number>();
  readonly errors: RegoError[] = [];
  private labelCounter = 0;

  constructor(
    private readonly linker: Linker,
    private readonly options: CodegenOptions,
  ) {
    this.m = linker.module;
  }

  /** Host builtins the generated code calls, in id order. */
  hostBuiltinNames(): string[] {
    return [...this.hostBuiltins.keys()];
  }

  private rt(name: RuntimeSymbolName, operands: binaryen.ExpressionRef[]): binaryen.ExpressionRef {
    return this.linker.call(name, operands);
  }

  generate(plan: IRPlan): void {
    const m = this.m;
    m.addGlobal(EPOCH, i32, true, m.i32.const(0));
    m.addGlobal(EPOCH_COUNTER, i32, true, m.i32.const(0));
    m.addGlobal(CURRENT_CTX, i32, true, m.i32.const(0));
    plan.functions.forEach((f, i) => {
      this.funcIndex.set(f.name, f);
      this.wasmNames.set(f.name, `writ_f${i}`);
    });
    for (const f of plan.functions) this.function(f);

    const entries = plan.entrypoints.map((e, i) => {
      const name = `writ_entry${i}`;
      const ctx = () => m.local.get(0, i32);
      const query = this.wasmNames.get(e.func);
      if (!query) throw new Error(`codegen: entrypoint ${e.name} names unknown function ${e.func}`);
      m.addFunction(
        name,
        binaryen.createType([i32]),
        binaryen.none,
        [],
        m.block(null, [
          m.global.set(CURRENT_CTX, ctx()),
          m.global.set(EPOCH_COUNTER, m.i32.add(m.global.get(EPOCH_COUNTER, i32), m.i32.const(1))),
          m.global.set(EPOCH, m.global.get(EPOCH_COUNTER, i32)),
          m.drop(m.call(query, [this.rt("writ_ctx_input", [ctx()]), this.rt("writ_ctx_data", [ctx()])], i32)),
        ]),
      );
      return { name: e.name, func: name };
    });
    this.linker.defineEntrypoints(entries);
    this.linker.defineFuelOut(
      this.options.budget === true ? this.hostId(hostImportName(BUDGET_BUILTIN)) : undefined,
    );
    this.linker.defineBuiltins(Object.fromEntries(this.hostBuiltins));
  }

  // ------------------------------------------------------------------------------ functions

  private function(f: IRFunction): void {
    const m = this.m;
    const name = this.wasmNames.get(f.name)!;
    const scratch = new Scratch(f.localCount);
    const top = this.label("fn");
    const body = this.stmts(f.body, [top], scratch);
    const result = () => m.local.get(f.result, i32);
    const parts: binaryen.ExpressionRef[] = [m.block(top, body)];
    if (f.memoize) {
      const memoEpoch = `${name}_memo_epoch`;
      const memoValue = `${name}_memo_value`;
      m.addGlobal(memoEpoch, i32, true, m.i32.const(-1));
      m.addGlobal(memoValue, i32, true, m.i32.const(0));
      parts.unshift(
        m.if(
          m.i32.eq(m.global.get(memoEpoch, i32), m.global.get(EPOCH, i32)),
          m.return(m.global.get(memoValue, i32)),
        ),
      );
      parts.push(m.global.set(memoEpoch, m.global.get(EPOCH, i32)), m.global.set(memoValue, result()));
    }
    parts.push(m.return(result()));
    const vars = new Array<number>(scratch.total - f.params.length).fill(i32);
    m.addFunction(name, binaryen.createType(f.params.map(() => i32)), i32, vars, m.block(null, parts));
  }

  private label(kind: string): string {
    return `${kind}${++this.labelCounter}`;
  }

  // ------------------------------------------------------------------------------ statements

  private stmts(
    list: readonly Stmt[],
    scopes: readonly string[],
    scratch: Scratch,
  ): binaryen.ExpressionRef[] {
    const out: binaryen.ExpressionRef[] = [];
    for (const s of list) out.push(this.stmt(s, scopes, scratch));
    if (out.length === 0) out.push(this.m.nop());
    return out;
  }

  private stmt(s: Stmt, scopes: readonly string[], scratch: Scratch): binaryen.ExpressionRef {
    const m = this.m;
    const fail = scopes[scopes.length - 1]!;
    const get = (l: Local) => m.local.get(l, i32);
    const set = (l: Local, v: binaryen.ExpressionRef) => m.local.set(l, v);
    const failIf = (cond: binaryen.ExpressionRef) => m.br(fail, cond);
    switch (s.op) {
      case "block": {
        const l = this.label("b");
        return m.block(l, this.stmts(s.body, [...scopes, l], scratch));
      }
      case "break":
        return m.br(scopes[scopes.length - 1 - s.depth]!);
      case "scan": {
        const n = scratch.take();
        const i = scratch.take();
        const exit = this.label("scan_exit");
        const loop = this.label("scan_loop");
        const iter = this.label("scan_iter");
        const type = this.rt("writ_type", [get(s.source)]);
        const t = scratch.take();
        const code = m.block(null, [
          set(t, type),
          failIf(m.i32.lt_u(get(t), m.i32.const(T_ARRAY))),
          set(n, this.rt("writ_length", [get(s.source)])),
          set(i, m.i32.const(0)),
          m.block(exit, [
            m.loop(
              loop,
              this.linker.meteredLoopBody(
                m.block(null, [
                  m.br(exit, m.i32.ge_u(get(i), get(n))),
                  set(s.key, this.rt("writ_key_at", [get(s.source), get(i)])),
                  set(s.value, this.rt("writ_value_at", [get(s.source), get(i)])),
                  m.block(iter, this.stmts(s.body, [...scopes, iter], scratch)),
                  set(i, m.i32.add(get(i), m.i32.const(1))),
                  m.br(loop),
                ]),
              ),
            ),
          ]),
        ]);
        scratch.give(t, i, n);
        return code;
      }
      case "not": {
        const l = this.label("not");
        return m.block(null, [m.block(l, [...this.stmts(s.body, [...scopes, l], scratch), m.br(fail)])]);
      }
      case "dot":
        return m.block(null, [
          set(s.target, this.rt("writ_value_get", [get(s.source), this.operand(s.key)])),
          failIf(m.i32.eqz(get(s.target))),
        ]);
      case "equal":
        return failIf(m.i32.eqz(this.rt("writ_equal", [this.operand(s.a), this.operand(s.b)])));
      case "notequal":
        return failIf(this.rt("writ_equal", [this.operand(s.a), this.operand(s.b)]));
      case "isdefined":
        return failIf(m.i32.eqz(get(s.local)));
      case "isundefined":
        return failIf(get(s.local));
      case "isarray":
        return failIf(m.i32.ne(this.rt("writ_type", [get(s.source)]), m.i32.const(T_ARRAY)));
      case "isobject":
        return failIf(m.i32.ne(this.rt("writ_type", [get(s.source)]), m.i32.const(T_OBJECT)));
      case "len":
        return m.block(null, [
          failIf(m.i32.lt_u(this.rt("writ_type", [get(s.source)]), m.i32.const(T_STRING))),
          set(
            s.target,
            this.rt("writ_number_int", [m.i64.extend_u(this.rt("writ_length", [get(s.source)]))]),
          ),
        ]);
      case "assign":
        return set(s.target, this.operand(s.source));
      case "assignonce": {
        const v = scratch.take();
        const code = m.block(null, [
          set(v, this.operand(s.source)),
          m.if(
            m.i32.eqz(get(s.target)),
            set(s.target, get(v)),
            m.if(m.i32.eqz(this.rt("writ_equal", [get(s.target), get(v)])), this.error(s.error)),
          ),
        ]);
        scratch.give(v);
        return code;
      }
      case "reset":
        return set(s.target, m.i32.const(0));
      case "callbuiltin":
        return m.block(null, [
          set(s.target, this.builtinCall(s.name, s.args, s.site)),
          ...this.strictErrorCheck(s.name, s.args, get(s.target)),
          failIf(m.i32.eqz(get(s.target))),
        ]);
      case "callfunc": {
        const name = this.wasmNames.get(s.func);
        if (!name) throw new Error(`codegen: call of unknown function ${s.func}`);
        return m.block(null, [
          set(
            s.target,
            m.call(
              name,
              s.args.map((a) => this.operand(a)),
              i32,
            ),
          ),
          failIf(m.i32.eqz(get(s.target))),
        ]);
      }
      case "makearray":
        return set(s.target, this.rt("writ_array", [m.i32.const(s.capacity)]));
      case "makeobject":
        return set(s.target, this.rt("writ_object", []));
      case "makeset":
        return set(s.target, this.rt("writ_set", []));
      case "arrayappend":
        return this.rt("writ_array_append", [get(s.array), this.operand(s.value)]);
      case "setadd":
        return this.rt("writ_set_add", [get(s.set), this.operand(s.value)]);
      case "objectinsert":
        if (!s.error)
          return this.rt("writ_object_insert", [get(s.object), this.operand(s.key), this.operand(s.value)]);
        return m.if(
          this.rt("writ_object_insert_once", [get(s.object), this.operand(s.key), this.operand(s.value)]),
          this.error(s.error),
        );
      case "objectinsertpath": {
        const call = this.rt("writ_object_insert_path", [
          get(s.object),
          this.pathArray(s.path),
          this.operand(s.value),
          m.i32.const(s.error ? 1 : 0),
        ]);
        return s.error ? m.if(call, this.error(s.error)) : m.drop(call);
      }
      case "objectsetaddpath":
        return this.rt("writ_object_set_add_path", [
          get(s.object),
          this.pathArray(s.path),
          this.operand(s.value),
        ]);
      case "objectmerge":
        return set(s.target, this.rt("writ_object_merge", [get(s.a), get(s.b), m.i32.const(0)]));
      case "upsert":
        return set(
          s.target,
          this.rt("writ_upsert", [get(s.source), this.pathArray(s.path), this.operand(s.value)]),
        );
      case "resultsetadd":
        return this.rt("writ_result_add_bindings", [m.global.get(CURRENT_CTX, i32), get(s.value)]);
      case "memoenter":
        return m.block(null, [
          set(s.save, m.global.get(EPOCH, i32)),
          m.global.set(EPOCH_COUNTER, m.i32.add(m.global.get(EPOCH_COUNTER, i32), m.i32.const(1))),
          set(s.epoch, m.global.get(EPOCH_COUNTER, i32)),
          m.global.set(EPOCH, get(s.epoch)),
        ]);
      case "memoset":
        return m.global.set(EPOCH, get(s.epoch));
      case "print": {
        const arr = scratch.take();
        const code = m.block(null, [
          set(arr, this.rt("writ_array", [m.i32.const(s.args.length)])),
          ...s.args.map((a) => this.rt("writ_array_append", [get(arr), get(a)])),
          this.rt("writ_print", [get(arr)]),
        ]);
        scratch.give(arr);
        return code;
      }
    }
  }

  /** Aborts evaluation with `file:line:col: message`. */
  private error(site: ErrorSite): binaryen.ExpressionRef {
    const m = this.m;
    const file = this.linker.addUtf8(site.file);
    const message = this.linker.addUtf8(`${CONFLICT_ERROR_CODE}: ${site.message}`);
    return m.block(null, [
      this.rt("writ_error_at", [
        m.i32.const(file.ptr),
        m.i32.const(file.len),
        m.i32.const(site.line),
        m.i32.const(site.col),
        m.i32.const(message.ptr),
        m.i32.const(message.len),
      ]),
      m.unreachable(),
    ]);
  }

  /** An array value of the path operands: a static constant when they all are constants. */
  private pathArray(path: readonly Operand[]): binaryen.ExpressionRef {
    const m = this.m;
    if (path.every((p) => p.kind !== "local")) {
      return m.i32.const(this.linker.constValue(`[${path.map((p) => operandJson(p)).join(",")}]`));
    }
    // Built at run time: writ_array(n) then appends, in one expression via a helper call chain.
    let expr = this.rt("writ_array", [m.i32.const(path.length)]);
    for (const p of path) expr = this.rt("writ_array_appended", [expr, this.operand(p)]);
    return expr;
  }

  private operand(op: Operand): binaryen.ExpressionRef {
    const m = this.m;
    switch (op.kind) {
      case "local":
        return m.local.get(op.local, i32);
      case "string":
        return m.i32.const(this.linker.constString(op.value));
      case "number":
        return m.i32.const(this.linker.constNumber(op.value));
      case "bool":
        return m.i32.const(this.linker.constValue(op.value ? "true" : "false"));
      case "null":
        return m.i32.const(this.linker.constValue("null"));
    }
  }

  // ------------------------------------------------------------------------------ builtins

  private builtinCall(name: string, args: readonly Operand[], site: ErrorSite): binaryen.ExpressionRef {
    const call = this.resolveBuiltin(name, args.length, site);
    const ops = args.map((a) => this.operand(a));
    switch (call.kind) {
      case "inline":
        return call.emit(ops);
      case "runtime":
        return this.linker.callDynamic(call.func, ops);
      case "host":
        return this.hostCall(call.id, ops);
    }
  }

  /**
   * A host call: each argument crosses as a string of its Rego value text and the result comes
   * back the same way (see `../host/`), so sets and exact numbers survive the SDK's JSON.
   */
  private hostCall(id: number, ops: readonly binaryen.ExpressionRef[]): binaryen.ExpressionRef {
    const m = this.m;
    const fns = [
      "writ_call_builtin0",
      "writ_call_builtin1",
      "writ_call_builtin2",
      "writ_call_builtin3",
      "writ_call_builtin4",
    ] as const;
    const fn = fns[ops.length];
    if (!fn) return m.i32.const(0);
    const texts = ops.map((op) => this.rt("writ_to_json_string", [op, m.i32.const(1)]));
    return this.rt("writ_parse_string", [
      this.rt(fn, [m.i32.const(id), m.i32.const(0), ...texts]),
      m.i32.const(1),
    ]);
  }

  /**
   * Under strict builtin errors, a native builtin that came back undefined is asked again of
   * its JavaScript twin (`writ.strict.<name>`), which throws the error the builtin raised; the
   * twin's value is not used. Host builtins throw by themselves in strict modules.
   */
  private strictErrorCheck(
    name: string,
    args: readonly Operand[],
    result: binaryen.ExpressionRef,
  ): binaryen.ExpressionRef[] {
    if (!this.options.strictBuiltinErrors || args.length > 4) return [];
    if (lookupBuiltin(name)?.implementation !== "native" || !this.options.nativeBuiltin(name)) return [];
    if (!hasHostBuiltin(hostImportName(name, true))) return [];
    const m = this.m;
    const id = this.hostId(hostImportName(name, true));
    return [
      m.if(
        m.i32.eqz(result),
        m.drop(
          this.hostCall(
            id,
            args.map((a) => this.operand(a)),
          ),
        ),
      ),
    ];
  }

  private hostId(importName: string): number {
    let id = this.hostBuiltins.get(importName);
    if (id === undefined) {
      id = this.hostBuiltins.size;
      this.hostBuiltins.set(importName, id);
    }
    return id;
  }

  private resolveBuiltin(name: string, arity: number, site: ErrorSite): BuiltinCall {
    const m = this.m;
    const bool = (cond: binaryen.ExpressionRef) => this.rt("writ_boolean", [cond]);
    const cmp = (args: binaryen.ExpressionRef[]) => this.rt("writ_compare", [args[0]!, args[1]!]);
    switch (name) {
      case "equal":
        return { kind: "inline", emit: (a) => bool(this.rt("writ_equal", [a[0]!, a[1]!])) };
      case "neq":
        return { kind: "inline", emit: (a) => bool(m.i32.eqz(this.rt("writ_equal", [a[0]!, a[1]!]))) };
      case "lt":
        return { kind: "inline", emit: (a) => bool(m.i32.lt_s(cmp(a), m.i32.const(0))) };
      case "lte":
        return { kind: "inline", emit: (a) => bool(m.i32.le_s(cmp(a), m.i32.const(0))) };
      case "gt":
        return { kind: "inline", emit: (a) => bool(m.i32.gt_s(cmp(a), m.i32.const(0))) };
      case "gte":
        return { kind: "inline", emit: (a) => bool(m.i32.ge_s(cmp(a), m.i32.const(0))) };
      case "internal.print":
        // What `print(…)` compiles to in OPA: one set of values per argument.
        return {
          kind: "inline",
          emit: (a) =>
            m.block(null, [this.rt("writ_print", [a[0]!]), m.i32.const(this.linker.constValue("true"))], i32),
        };
      default:
        break;
    }
    const spec = lookupBuiltin(name);
    const native = this.options.nativeBuiltin(name);
    if (native && spec?.implementation === "native") return { kind: "runtime", func: native };
    if (arity > 4) {
      this.errors.push(
        new RegoError(
          "rego_type_error",
          `${name}: host builtins take at most 4 arguments`,
          siteLocation(site),
        ),
      );
      return { kind: "inline", emit: () => m.i32.const(0) };
    }
    return { kind: "host", id: this.hostId(hostImportName(name, this.options.strictBuiltinErrors)), arity };
  }
}

function siteLocation(site: ErrorSite) {
  return { file: site.file, line: site.line, col: site.col, offset: 0 };
}

function operandJson(op: Operand): string {
  switch (op.kind) {
    case "string":
      return JSON.stringify(op.value);
    case "number":
      return op.value;
    case "bool":
      return String(op.value);
    case "null":
      return "null";
    case "local":
      throw new Error("codegen: a local operand has no JSON text");
  }
}

/** Temporary locals beyond the IR's own, reused once a statement is done with them. */
class Scratch {
  private readonly free: number[] = [];
  total: number;

  constructor(first: number) {
    this.total = first;
  }

  take(): number {
    return this.free.pop() ?? this.total++;
  }

  give(...locals: number[]): void {
    this.free.push(...locals);
  }
}
