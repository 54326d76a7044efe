/**
 * A reference interpreter of the planner's IR (`ir.ts`), so that plans can be tested without
 * WebAssembly. It follows the IR's documented semantics statement by statement, with the value
 * model of `value.ts` and the builtins of `../builtins/`.
 *
 * Control flow. Executing a statement list yields a *signal*: {@link DONE} when it ran to its
 * end, or `n ≥ 0` meaning "leave `n + 1` enclosing failure scopes". A failing statement yields 0
 * (it abandons the innermost scope), `break depth` yields `depth`. A failure scope receiving
 * `n` is left; with `n > 0` it passes `n - 1` on to the statement list around it.
 */

import {
  type BuiltinContext,
  type BuiltinDef,
  BuiltinError,
  builtinTable,
  systemContext,
} from "../builtins/index.ts";
import type { RegoErrorCode } from "../errors.ts";
import type { ErrorSite, IRFunction, IRPlan, Local, Operand, Stmt } from "./ir.ts";
import {
  canonicalKey,
  collectionEntries,
  compareValues,
  FALSE,
  formatValue,
  lookup,
  makeArray,
  makeObject,
  makeSet,
  makeString,
  NULL,
  numberFromBigInt,
  numberFromText,
  ObjectValue,
  SetValue,
  TRUE,
  type Value,
  valueEquals,
  valueLength,
} from "./value.ts";

/** A runtime error of the evaluation (`file:line:col: message`), as OPA's Wasm target aborts with. */
export class RegoRuntimeError extends Error {
  readonly code: RegoErrorCode = "eval_conflict_error";

  constructor(readonly site: ErrorSite) {
    super(`${site.file}:${site.line}:${site.col}: ${site.message}`);
    this.name = "RegoRuntimeError";
  }
}

/** A plan that breaks the IR's rules (unknown function, arity mismatch, …): a planner bug. */
export class IRError extends Error {
  constructor(message: string) {
    super(`invalid IR: ${message}`);
    this.name = "IRError";
  }
}

export interface InterpretOptions {
  /** Receives each line `print` writes (default: discarded). */
  print?: (line: string, site: ErrorSite) => void;
  /** The clock of `time.now_ns`, in nanoseconds since the epoch; read at most once per evaluation. */
  now?: () => bigint;
  /** Builtins that replace or extend the reference ones. */
  builtins?: ReadonlyMap<string, BuiltinDef>;
}

/**
 * Evaluates `entrypoint` of `plan` with the given input (undefined: no input) and data, and
 * returns the result set: the binding objects added by `resultsetadd`, deduplicated and sorted in
 * OPA's value order. Throws {@link RegoRuntimeError} for conflicts.
 */
export function interpret(
  plan: IRPlan,
  entrypoint: string,
  input: Value | undefined,
  data: Value,
  options: InterpretOptions = {},
): Value[] {
  const ep = plan.entrypoints.find((e) => e.name === entrypoint);
  if (!ep)
    throw new Error(
      `no entrypoint named ${entrypoint} (have: ${plan.entrypoints.map((e) => e.name).join(", ")})`,
    );
  const evaluation = new Evaluation(plan, options);
  evaluation.call(evaluation.func(ep.func), [input, data]);
  return evaluation.resultSet();
}

// ------------------------------------------------------------------------------------ signals

/** The statement list ran to its end. */
const DONE = -1;
/** Abandon the innermost failure scope. */
const FAIL = 0;

type Signal = number;

/** What a failure scope hands on after `signal` reached it. */
function leaveScope(signal: Signal): Signal {
  return signal <= 0 ? DONE : signal - 1;
}

// ------------------------------------------------------------------------------------ frames

class Frame {
  readonly locals: Array<Value | undefined>;
  /** Locals of `memoenter`/`memoset`, which hold raw epoch numbers. */
  readonly epochs = new Map<Local, number>();

  constructor(size: number) {
    this.locals = new Array<Value | undefined>(size).fill(undefined);
  }
}

const UNDEFINED_RESULT = Symbol("undefined");
type Memo = Map<string, Value | typeof UNDEFINED_RESULT>;

const literalCache = new WeakMap<Operand, Value>();

function literal(op: Exclude<Operand, { kind: "local" }>): Value {
  let v = literalCache.get(op);
  if (!v) {
    switch (op.kind) {
      case "string":
        v = makeString(op.value);
        break;
      case "number":
        v = numberFromText(op.value);
        break;
      case "bool":
        v = op.value ? TRUE : FALSE;
        break;
      case "null":
        v = NULL;
        break;
    }
    literalCache.set(op, v);
  }
  return v;
}

// ------------------------------------------------------------------------------------ evaluation

class Evaluation {
  private readonly functions = new Map<string, IRFunction>();
  private readonly builtins: ReadonlyMap<string, BuiltinDef>;
  private readonly results = new Map<string, Value>();
  private readonly memos = new Map<number, Memo>();
  /** Intermediate objects and sets created by path inserts into a root object (safe to mutate). */
  private readonly owned = new WeakMap<ObjectValue, WeakSet<ObjectValue | SetValue>>();
  private readonly context: BuiltinContext;
  private epoch = 0;
  private nextEpoch = 1;

  constructor(
    plan: IRPlan,
    private readonly options: InterpretOptions,
  ) {
    for (const f of plan.functions) this.functions.set(f.name, f);
    this.builtins = options.builtins ? new Map([...builtinTable, ...options.builtins]) : builtinTable;
    this.context = systemContext(options.now);
  }

  func(name: string): IRFunction {
    const f = this.functions.get(name);
    if (!f) throw new IRError(`no function named ${name}`);
    return f;
  }

  resultSet(): Value[] {
    return [...this.results.values()].sort(compareValues);
  }

  /** Calls a function; undefined when its result local is undefined. */
  call(f: IRFunction, args: ReadonlyArray<Value | undefined>): Value | undefined {
    if (args.length !== f.params.length)
      throw new IRError(`${f.name} takes ${f.params.length} arguments, got ${args.length}`);
    const memo = f.memoize ? this.memo() : undefined;
    const cached = memo?.get(f.name);
    if (cached !== undefined) return cached === UNDEFINED_RESULT ? undefined : cached;
    const frame = new Frame(f.localCount);
    f.params.forEach((p, i) => {
      frame.locals[p] = args[i];
    });
    const epoch = this.epoch;
    this.run(f.body, frame);
    this.epoch = epoch;
    const result = frame.locals[f.result];
    memo?.set(f.name, result ?? UNDEFINED_RESULT);
    return result;
  }

  private memo(): Memo {
    let memo = this.memos.get(this.epoch);
    if (!memo) {
      memo = new Map();
      this.memos.set(this.epoch, memo);
    }
    return memo;
  }

  // -- statements

  private run(stmts: readonly Stmt[], frame: Frame): Signal {
    for (const stmt of stmts) {
      const signal = this.step(stmt, frame);
      if (signal !== DONE) return signal;
    }
    return DONE;
  }

  private step(s: Stmt, frame: Frame): Signal {
    switch (s.op) {
      case "block":
        return leaveScope(this.run(s.body, frame));
      case "break":
        return s.depth;
      case "scan":
        return this.scan(s, frame);
      case "not":
        return this.not(s.body, frame);
      case "dot":
        return this.dot(s.source, s.key, s.target, frame);
      case "equal":
        return this.compare(s.a, s.b, frame, true);
      case "notequal":
        return this.compare(s.a, s.b, frame, false);
      case "isdefined":
        return frame.locals[s.local] !== undefined ? DONE : FAIL;
      case "isundefined":
        return frame.locals[s.local] === undefined ? DONE : FAIL;
      case "isarray":
        return frame.locals[s.source]?.type === "array" ? DONE : FAIL;
      case "isobject":
        return frame.locals[s.source]?.type === "object" ? DONE : FAIL;
      case "len":
        return this.len(s.source, s.target, frame);
      case "assign":
        frame.locals[s.target] = this.operand(s.source, frame);
        return DONE;
      case "assignonce":
        return this.assignOnce(s, frame);
      case "reset":
        frame.locals[s.target] = undefined;
        return DONE;
      case "callbuiltin":
        return this.callBuiltin(s, frame);
      case "callfunc":
        return this.callFunc(s, frame);
      default:
        return this.construct(s, frame);
    }
  }

  /** Statements that build values, manage epochs, print or add results. */
  private construct(s: ConstructStmt, frame: Frame): Signal {
    switch (s.op) {
      case "makearray":
        frame.locals[s.target] = makeArray([]);
        break;
      case "makeobject":
        frame.locals[s.target] = makeObject();
        break;
      case "makeset":
        frame.locals[s.target] = makeSet();
        break;
      case "arrayappend":
        this.arrayAppend(s.array, s.value, frame);
        break;
      case "setadd":
        this.setAdd(s.set, s.value, frame);
        break;
      case "objectinsert":
        this.objectInsert(s, frame);
        break;
      case "objectinsertpath":
        this.objectInsertPath(s, frame);
        break;
      case "objectsetaddpath":
        this.objectSetAddPath(s, frame);
        break;
      case "objectmerge":
        return this.objectMerge(s, frame);
      case "upsert":
        return this.upsert(s, frame);
      case "resultsetadd":
        this.resultSetAdd(s.value, frame);
        break;
      case "memoenter":
        frame.epochs.set(s.save, this.epoch);
        this.epoch = this.nextEpoch++;
        frame.epochs.set(s.epoch, this.epoch);
        break;
      case "memoset":
        this.epoch = this.epochIn(s.epoch, frame);
        break;
      case "print":
        this.print(s.args, s.site, frame);
        break;
      default:
        return unknownStatement(s);
    }
    return DONE;
  }

  private set(frame: Frame, target: Local, value: Value | undefined): Signal {
    if (value === undefined) return FAIL;
    frame.locals[target] = value;
    return DONE;
  }

  private operand(op: Operand, frame: Frame): Value | undefined {
    return op.kind === "local" ? frame.locals[op.local] : literal(op);
  }

  private defined(op: Operand, frame: Frame, what: string): Value {
    const v = this.operand(op, frame);
    if (v === undefined) throw new IRError(`${what} of an undefined local`);
    return v;
  }

  private epochIn(local: Local, frame: Frame): number {
    const epoch = frame.epochs.get(local);
    if (epoch === undefined) throw new IRError(`memoset of local ${local}, which holds no epoch`);
    return epoch;
  }

  // -- control

  private scan(s: Extract<Stmt, { op: "scan" }>, frame: Frame): Signal {
    const entries = collectionEntries(frame.locals[s.source]);
    if (!entries) return FAIL;
    for (const [key, value] of entries) {
      frame.locals[s.key] = key;
      frame.locals[s.value] = value;
      const signal = this.run(s.body, frame);
      if (signal > 0) return signal - 1;
    }
    return DONE;
  }

  private not(body: readonly Stmt[], frame: Frame): Signal {
    const signal = this.run(body, frame);
    if (signal === DONE) return FAIL;
    return leaveScope(signal);
  }

  // -- tests

  private dot(source: Local, keyOp: Operand, target: Local, frame: Frame): Signal {
    const key = this.operand(keyOp, frame);
    return key === undefined ? FAIL : this.set(frame, target, lookup(frame.locals[source], key));
  }

  private compare(a: Operand, b: Operand, frame: Frame, wantEqual: boolean): Signal {
    const x = this.operand(a, frame);
    const y = this.operand(b, frame);
    if (x === undefined || y === undefined) return FAIL;
    return valueEquals(x, y) === wantEqual ? DONE : FAIL;
  }

  private len(source: Local, target: Local, frame: Frame): Signal {
    const n = valueLength(frame.locals[source]);
    return n === undefined ? FAIL : this.set(frame, target, numberFromBigInt(BigInt(n)));
  }

  private assignOnce(s: Extract<Stmt, { op: "assignonce" }>, frame: Frame): Signal {
    const value = this.operand(s.source, frame);
    if (value === undefined) return FAIL;
    const current = frame.locals[s.target];
    if (current !== undefined && !valueEquals(current, value)) throw new RegoRuntimeError(s.error);
    frame.locals[s.target] = value;
    return DONE;
  }

  // -- calls

  private callBuiltin(s: Extract<Stmt, { op: "callbuiltin" }>, frame: Frame): Signal {
    const def = this.builtins.get(s.name);
    if (!def) throw new IRError(`unknown builtin ${s.name}`);
    if (def.arity !== s.args.length)
      throw new IRError(`${s.name} takes ${def.arity} arguments, got ${s.args.length}`);
    const args: Value[] = [];
    for (const a of s.args) {
      const v = this.operand(a, frame);
      if (v === undefined) return FAIL;
      args.push(v);
    }
    try {
      return this.set(frame, s.target, def.impl(args, this.context));
    } catch (e) {
      if (e instanceof BuiltinError) return FAIL;
      throw e;
    }
  }

  private callFunc(s: Extract<Stmt, { op: "callfunc" }>, frame: Frame): Signal {
    const args = s.args.map((a) => this.operand(a, frame));
    return this.set(frame, s.target, this.call(this.func(s.func), args));
  }

  // -- construction

  private arrayAppend(array: Local, value: Operand, frame: Frame): void {
    const arr = frame.locals[array];
    if (arr?.type !== "array") throw new IRError(`arrayappend to local ${array}, which is not an array`);
    arr.items.push(this.defined(value, frame, "arrayappend"));
  }

  private setAdd(set: Local, value: Operand, frame: Frame): void {
    const s = frame.locals[set];
    if (!(s instanceof SetValue)) throw new IRError(`setadd to local ${set}, which is not a set`);
    s.add(this.defined(value, frame, "setadd"));
  }

  private objectAt(local: Local, frame: Frame, op: string): ObjectValue {
    const obj = frame.locals[local];
    if (!(obj instanceof ObjectValue)) throw new IRError(`${op} into local ${local}, which is not an object`);
    return obj;
  }

  private objectInsert(s: Extract<Stmt, { op: "objectinsert" }>, frame: Frame): void {
    const obj = this.objectAt(s.object, frame, "objectinsert");
    const key = this.defined(s.key, frame, "objectinsert key");
    const value = this.defined(s.value, frame, "objectinsert value");
    const current = obj.get(key);
    if (s.error && current !== undefined && !valueEquals(current, value)) throw new RegoRuntimeError(s.error);
    obj.set(key, value);
  }

  /** Whether `v` was created by a path insert into `root`, so that it may be modified in place. */
  private isOwned(root: ObjectValue, v: ObjectValue | SetValue): boolean {
    return this.owned.get(root)?.has(v) ?? false;
  }

  private own<T extends ObjectValue | SetValue>(root: ObjectValue, v: T): T {
    let owned = this.owned.get(root);
    if (!owned) {
      owned = new WeakSet();
      this.owned.set(root, owned);
    }
    owned.add(v);
    return v;
  }

  /**
   * The object at `path` below `root` (all of `path`), created or copied so that it may be
   * modified: shared objects are never mutated. With `error` (rule values being assembled), only
   * objects that path inserts created may be descended into: meeting any other value on the way
   * (a scalar, or an object that is some rule's value) is a conflict, as OPA reports injecting
   * into another rule's value. Without `error`, objects are copied and other values replaced.
   */
  private writableObjectAt(
    root: ObjectValue,
    path: readonly Value[],
    error: ErrorSite | undefined,
  ): ObjectValue {
    let obj = root;
    for (const key of path) {
      // A nested object is about to change: cached canonical keys on the way are stale.
      obj.cachedKey = undefined;
      const existing = obj.get(key);
      let next: ObjectValue;
      if (existing instanceof ObjectValue && this.isOwned(root, existing)) next = existing;
      else if (existing !== undefined && error) throw new RegoRuntimeError(error);
      else if (existing instanceof ObjectValue) next = this.own(root, existing.copy());
      else next = this.own(root, makeObject());
      if (next !== existing) obj.set(key, next);
      obj = next;
    }
    obj.cachedKey = undefined;
    return obj;
  }

  private pathValues(path: readonly Operand[], frame: Frame, op: string): Value[] {
    if (path.length === 0) throw new IRError(`${op} with an empty path`);
    return path.map((p) => this.defined(p, frame, `${op} path`));
  }

  private objectInsertPath(s: Extract<Stmt, { op: "objectinsertpath" }>, frame: Frame): void {
    const root = this.objectAt(s.object, frame, "objectinsertpath");
    const path = this.pathValues(s.path, frame, "objectinsertpath");
    const value = this.defined(s.value, frame, "objectinsertpath value");
    const parent = this.writableObjectAt(root, path.slice(0, -1), s.error);
    const key = path[path.length - 1]!;
    const current = parent.get(key);
    if (s.error && current !== undefined && !valueEquals(current, value)) throw new RegoRuntimeError(s.error);
    parent.set(key, value);
  }

  private objectSetAddPath(s: Extract<Stmt, { op: "objectsetaddpath" }>, frame: Frame): void {
    const root = this.objectAt(s.object, frame, "objectsetaddpath");
    const path = this.pathValues(s.path, frame, "objectsetaddpath");
    const value = this.defined(s.value, frame, "objectsetaddpath value");
    const parent = this.writableObjectAt(root, path.slice(0, -1), undefined);
    const key = path[path.length - 1]!;
    const current = parent.get(key);
    if (current !== undefined && !(current instanceof SetValue)) {
      throw new IRError(`objectsetaddpath into ${formatValue(current)}, which is not a set`);
    }
    const set =
      current && this.isOwned(root, current) ? current : this.own(root, current ? current.copy() : makeSet());
    set.add(value);
    if (set !== current) parent.set(key, set);
  }

  private objectMerge(s: Extract<Stmt, { op: "objectmerge" }>, frame: Frame): Signal {
    const a = frame.locals[s.a];
    const b = frame.locals[s.b];
    if (!(a instanceof ObjectValue) || !(b instanceof ObjectValue)) return FAIL;
    frame.locals[s.target] = deepMerge(a, b);
    return DONE;
  }

  private upsert(s: Extract<Stmt, { op: "upsert" }>, frame: Frame): Signal {
    const path = s.path.map((p) => this.defined(p, frame, "upsert path"));
    const value = this.defined(s.value, frame, "upsert value");
    frame.locals[s.target] = upsertValue(frame.locals[s.source], path, 0, value);
    return DONE;
  }

  private resultSetAdd(local: Local, frame: Frame): void {
    const v = frame.locals[local];
    if (!(v instanceof ObjectValue))
      throw new IRError(`resultsetadd of local ${local}, which is not an object`);
    this.results.set(canonicalKey(v), v);
  }

  // -- print

  private print(args: readonly Local[], site: ErrorSite, frame: Frame): void {
    const sink = this.options.print;
    if (!sink) return;
    const columns = args.map((local) => printAlternatives(frame.locals[local]));
    for (const line of crossProduct(columns)) sink(line.join(" "), site);
  }
}

// ------------------------------------------------------------------------------------ helpers

/** Statements {@link Evaluation.construct} handles: all but control flow, tests and calls. */
type ConstructStmt = Exclude<
  Stmt,
  {
    op:
      | "block"
      | "break"
      | "scan"
      | "not"
      | "dot"
      | "equal"
      | "notequal"
      | "isdefined"
      | "isundefined"
      | "isarray"
      | "isobject"
      | "len"
      | "assign"
      | "assignonce"
      | "reset"
      | "callbuiltin"
      | "callfunc";
  }
>;

/** Unreachable for well-typed plans; a statement kind added to ir.ts fails to compile here first. */
function unknownStatement(s: never): never {
  throw new IRError(`unknown statement ${JSON.stringify(s)}`);
}

/** Deep merge of two objects; `b` wins unless both values are objects. Never mutates. */
function deepMerge(a: ObjectValue, b: ObjectValue): ObjectValue {
  const out = a.copy();
  for (const [k, v] of b.entries()) {
    const old = out.get(k);
    out.set(k, old instanceof ObjectValue && v instanceof ObjectValue ? deepMerge(old, v) : v);
  }
  return out;
}

/** A copy of `source` with `path[i…]` set to `value`, creating objects (and replacing non-objects) on the way. */
function upsertValue(source: Value | undefined, path: readonly Value[], i: number, value: Value): Value {
  if (i === path.length) return value;
  const obj = source instanceof ObjectValue ? source.copy() : makeObject();
  const key = path[i]!;
  obj.set(key, upsertValue(obj.get(key), path, i + 1, value));
  return obj;
}

/** What `print` shows for one argument: each value it took, or `<undefined>`. */
function printAlternatives(v: Value | undefined): string[] {
  if (v === undefined) return ["<undefined>"];
  if (!(v instanceof SetValue)) return [printText(v)];
  if (v.size === 0) return ["<undefined>"];
  return v.elements().map(printText);
}

function printText(v: Value): string {
  return v.type === "string" ? v.value : formatValue(v);
}

function crossProduct(columns: readonly string[][]): string[][] {
  return columns.reduce<string[][]>(
    (rows, column) => rows.flatMap((row) => column.map((x) => [...row, x])),
    [[]],
  );
}
