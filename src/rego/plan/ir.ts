/**
 * The planner's intermediate representation: a small imperative language close to OPA's own
 * planner IR, and close enough to WebAssembly that the code generator translates it statement by
 * statement.
 *
 * Execution model. Each function has numbered locals holding values or "undefined". Statements
 * run in order. A statement that fails (a `dot` that finds nothing, an `equal` that is false, a
 * call whose result is undefined, …) abandons the innermost enclosing *failure scope*: a
 * `block`, the body of one `scan` iteration (the scan moves on to the next element), or a `not`
 * body. `break` leaves `depth + 1` enclosing failure scopes on purpose (depth 0: the innermost).
 * Statements never fail outside a failure scope: function bodies are wrapped in one.
 */

export type Local = number;

/** Locals every function has: the input and data documents it sees. */
export const INPUT: Local = 0;
export const DATA: Local = 1;

export type Operand =
  | { kind: "local"; local: Local }
  | { kind: "string"; value: string }
  | { kind: "number"; value: string }
  | { kind: "bool"; value: boolean }
  | { kind: "null" };

/** Where a runtime error is reported, as OPA prints it: `file:line:col: code: message`. */
export interface ErrorSite {
  file: string;
  line: number;
  col: number;
  message: string;
}

/** The error code of every runtime error the IR raises itself (conflicts). */
export const CONFLICT_ERROR_CODE = "eval_conflict_error";

export type Stmt =
  /** A failure scope. */
  | { op: "block"; body: Stmt[] }
  /** Leaves `depth + 1` enclosing failure scopes. */
  | { op: "break"; depth: number }
  /**
   * For each element of `source` (array index/value, object key/value, set element/element),
   * assigns `key` and `value` and runs `body` as a failure scope. Fails when `source` is not a
   * collection; otherwise never fails itself.
   */
  | { op: "scan"; source: Local; key: Local; value: Local; body: Stmt[] }
  /** Runs `body` as a failure scope; fails if the body completed. */
  | { op: "not"; body: Stmt[] }
  /** `target = source[key]`; fails when undefined. */
  | { op: "dot"; source: Local; key: Operand; target: Local }
  | { op: "equal"; a: Operand; b: Operand }
  | { op: "notequal"; a: Operand; b: Operand }
  | { op: "isdefined"; local: Local }
  | { op: "isundefined"; local: Local }
  | { op: "isarray"; source: Local }
  | { op: "isobject"; source: Local }
  /** `target = count(source)` for arrays, objects, sets and strings; fails otherwise. */
  | { op: "len"; source: Local; target: Local }
  | { op: "assign"; source: Operand; target: Local }
  /** Like `assign`, but aborts evaluation with `error` if `target` already holds another value. */
  | { op: "assignonce"; source: Operand; target: Local; error: ErrorSite }
  /** Makes `target` undefined. */
  | { op: "reset"; target: Local }
  /** Calls a builtin; fails when the result is undefined (including type errors). */
  | { op: "callbuiltin"; name: string; args: Operand[]; target: Local; site: ErrorSite }
  /** Calls a planned function; fails when the result is undefined. */
  | { op: "callfunc"; func: string; args: Operand[]; target: Local }
  | { op: "makearray"; capacity: number; target: Local }
  | { op: "makeobject"; target: Local }
  | { op: "makeset"; target: Local }
  | { op: "arrayappend"; array: Local; value: Operand }
  | { op: "setadd"; set: Local; value: Operand }
  /** `object[key] = value`; with `error`, aborts if the key holds a different value. */
  | { op: "objectinsert"; object: Local; key: Operand; value: Operand; error: ErrorSite | undefined }
  /**
   * Sets `object[path[0]]…[path[n-1]] = value`, creating (or copying, never mutating shared)
   * intermediate objects; with `error`, aborts when a different value is already there.
   */
  | { op: "objectinsertpath"; object: Local; path: Operand[]; value: Operand; error: ErrorSite | undefined }
  /** Adds `value` to the set at `object[path…]`, creating it (and intermediate objects). */
  | { op: "objectsetaddpath"; object: Local; path: Operand[]; value: Operand }
  /** `target` = deep merge of objects `a` and `b` (b wins on non-object leaves); never mutates. */
  | { op: "objectmerge"; a: Local; b: Local; target: Local }
  /** `target` = a copy of `source` with the value at `path` replaced (missing objects created). */
  | { op: "upsert"; source: Local; path: Operand[]; value: Operand; target: Local }
  /** Adds `value` (an object of bindings) to the evaluation's result set. */
  | { op: "resultsetadd"; value: Local }
  /**
   * Memoized rule values are only valid in the memo epoch they were computed in. `memoenter`
   * stores the current epoch number in `save` and a fresh one in `epoch` and makes it current;
   * `memoset` makes the number in a local current. These two locals hold raw epoch numbers, not
   * values.
   */
  | { op: "memoenter"; save: Local; epoch: Local }
  | { op: "memoset"; epoch: Local }
  /** `print(...)`: prints the values (each a set of the values its argument took). */
  | { op: "print"; args: Local[]; site: ErrorSite };

export interface IRFunction {
  name: string;
  /** Parameter locals, in call order: always INPUT and DATA first. */
  params: Local[];
  /** The local holding the return value (undefined = the call fails). */
  result: Local;
  body: Stmt[];
  /** Number of locals used (all below this). */
  localCount: number;
  /** Rules without arguments are memoized per evaluation (and memo epoch). */
  memoize: boolean;
}

export interface IREntrypoint {
  name: string;
  /** The function (params INPUT, DATA) that fills the result set. */
  func: string;
}

export interface IRPlan {
  functions: IRFunction[];
  entrypoints: IREntrypoint[];
  /** Builtins the plan calls, by name. */
  builtins: string[];
}
