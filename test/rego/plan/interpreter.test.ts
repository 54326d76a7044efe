import { describe, expect, it } from "vitest";
import type { BuiltinDef } from "../../../src/rego/builtins/index.ts";
import { IRError, interpret, RegoRuntimeError } from "../../../src/rego/plan/interpreter.ts";
import type { ErrorSite, IRFunction, IRPlan, Operand, Stmt } from "../../../src/rego/plan/ir.ts";
import {
  formatValue,
  fromJSON,
  makeObject,
  makeSet,
  makeString,
  toJSON,
  type Value,
} from "../../../src/rego/plan/value.ts";

// ------------------------------------------------------------------------------------ helpers

const L = (local: number): Operand => ({ kind: "local", local });
const S = (value: string): Operand => ({ kind: "string", value });
const N = (value: string): Operand => ({ kind: "number", value });
const T: Operand = { kind: "bool", value: true };

const site = (message: string): ErrorSite => ({ file: "policy.rego", line: 3, col: 1, message });

/** A query function (`q`, locals 0 = input, 1 = data) whose body usually ends in `resultsetadd`. */
function queryFn(body: Stmt[], localCount = 32): IRFunction {
  return { name: "q", params: [0, 1], result: 2, body: [{ op: "block", body }], localCount, memoize: false };
}

function ruleFn(
  name: string,
  body: Stmt[],
  options: { params?: number[]; memoize?: boolean } = {},
): IRFunction {
  const params = options.params ?? [0, 1];
  return {
    name,
    params,
    result: 10,
    body: [{ op: "block", body }],
    localCount: 32,
    memoize: options.memoize ?? params.length === 2,
  };
}

function planOf(...functions: IRFunction[]): IRPlan {
  return { functions, entrypoints: [{ name: "main", func: "q" }], builtins: [] };
}

/** Statements that add `{"x": <local>}` to the result set. */
function emit(local: number, scratch = 31): Stmt[] {
  return [
    { op: "makeobject", target: scratch },
    { op: "objectinsert", object: scratch, key: S("x"), value: L(local), error: undefined },
    { op: "resultsetadd", value: scratch },
  ];
}

function run(plan: IRPlan, input: unknown = undefined, data: unknown = {}, options = {}): unknown[] {
  return interpret(
    plan,
    "main",
    input === undefined ? undefined : fromJSON(input),
    fromJSON(data),
    options,
  ).map(toJSON);
}

/** The `x` values of a result set. */
function xs(plan: IRPlan, input: unknown = undefined, data: unknown = {}, options = {}): unknown[] {
  return run(plan, input, data, options).map((b) => (b as { x: unknown }).x);
}

// ------------------------------------------------------------------------------------ tests

describe("results", () => {
  it("returns the bindings added to the result set, deduplicated and sorted", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 1, key: S("xs"), target: 3 },
        { op: "scan", source: 3, key: 4, value: 5, body: emit(5) },
      ]),
    );
    expect(xs(plan, undefined, { xs: [3, "a", 1, 3, null] })).toEqual([null, 1, 3, "a"]);
  });

  it("is empty when the query is undefined (missing input)", () => {
    const plan = planOf(queryFn([{ op: "dot", source: 0, key: S("x"), target: 3 }, ...emit(3)]));
    expect(run(plan)).toEqual([]);
    expect(run(plan, { x: 1 })).toEqual([{ x: 1 }]);
  });

  it("rejects unknown entrypoints and functions", () => {
    const plan = planOf(queryFn([{ op: "callfunc", func: "nope", args: [L(0), L(1)], target: 3 }]));
    expect(() => interpret(plan, "other", undefined, makeObject())).toThrow(/no entrypoint named other/);
    expect(() => interpret(plan, "main", undefined, makeObject())).toThrow(IRError);
  });
});

describe("failure scopes", () => {
  it("abandons the innermost block on failure and continues after it", () => {
    const plan = planOf(
      queryFn([
        { op: "assign", source: S("before"), target: 3 },
        {
          op: "block",
          body: [
            { op: "equal", a: N("1"), b: N("2") },
            { op: "assign", source: S("inside"), target: 3 },
          ],
        },
        ...emit(3),
      ]),
    );
    expect(xs(plan)).toEqual(["before"]);
  });

  it("moves a scan on to the next element when an iteration fails", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        {
          op: "scan",
          source: 3,
          key: 4,
          value: 5,
          body: [
            { op: "callbuiltin", name: "gt", args: [L(5), N("1")], target: 6, site: site("gt") },
            { op: "notequal", a: L(6), b: { kind: "bool", value: false } },
            ...emit(5),
          ],
        },
      ]),
    );
    expect(xs(plan, { xs: [1, 2, 0, 3] })).toEqual([2, 3]);
  });

  it("scans objects by key and sets by element, in OPA's order", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("o"), target: 3 },
        { op: "makearray", capacity: 0, target: 7 },
        { op: "scan", source: 3, key: 4, value: 5, body: [{ op: "arrayappend", array: 7, value: L(4) }] },
        { op: "dot", source: 1, key: S("s"), target: 8 },
        { op: "scan", source: 8, key: 4, value: 5, body: [{ op: "arrayappend", array: 7, value: L(5) }] },
        ...emit(7),
      ]),
    );
    const data = makeObject([[makeString("s"), makeSet([makeString("b"), makeString("a")])]]);
    const result = interpret(plan, "main", fromJSON({ o: { z: 1, a: 2 } }), data).map(toJSON);
    expect(result).toEqual([{ x: ["a", "z", "a", "b"] }]);
  });

  it("fails a scan over a non-collection", () => {
    const plan = planOf(queryFn([{ op: "scan", source: 0, key: 3, value: 4, body: [] }, ...emit(0)]));
    expect(run(plan, "str")).toEqual([]);
    expect(run(plan, [])).toEqual([{ x: [] }]);
  });

  it("`break depth` leaves depth + 1 scopes: not-style (break 1) drops the candidate", () => {
    // not input.xs[_] == 2, as the planner emits it.
    const notTwo = (v: number): Stmt[] => [
      { op: "reset", target: 10 },
      {
        op: "block",
        body: [
          { op: "equal", a: L(v), b: N("2") },
          { op: "assign", source: T, target: 10 },
          { op: "break", depth: 1 },
        ],
      },
      { op: "isundefined", local: 10 },
    ];
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        { op: "scan", source: 3, key: 4, value: 5, body: [...notTwo(5), ...emit(5)] },
      ]),
    );
    expect(xs(plan, { xs: [1, 2, 3] })).toEqual([1, 3]);
  });

  it("`break 0` leaves just the innermost scope", () => {
    const plan = planOf(
      queryFn([
        { op: "assign", source: N("1"), target: 3 },
        {
          op: "block",
          body: [
            { op: "break", depth: 0 },
            { op: "assign", source: N("2"), target: 3 },
          ],
        },
        ...emit(3),
      ]),
    );
    expect(xs(plan)).toEqual([1]);
  });

  it("every-style breaks leave a scan early", () => {
    // every x in input.xs { x > 0 }: a failing element sets `failed` and breaks out of the scan.
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        { op: "reset", target: 8 },
        { op: "assign", source: N("0"), target: 9 },
        {
          op: "block",
          body: [
            {
              op: "scan",
              source: 3,
              key: 4,
              value: 5,
              body: [
                { op: "callbuiltin", name: "plus", args: [L(9), N("1")], target: 9, site: site("plus") },
                { op: "reset", target: 6 },
                {
                  op: "block",
                  body: [
                    { op: "callbuiltin", name: "gt", args: [L(5), N("0")], target: 7, site: site("gt") },
                    { op: "notequal", a: L(7), b: { kind: "bool", value: false } },
                    { op: "assign", source: T, target: 6 },
                    { op: "break", depth: 1 },
                  ],
                },
                { op: "isundefined", local: 6 },
                { op: "assign", source: T, target: 8 },
                { op: "break", depth: 2 },
              ],
            },
          ],
        },
        { op: "isundefined", local: 8 },
        ...emit(9),
      ]),
    );
    expect(xs(plan, { xs: [1, 2, 3] })).toEqual([3]);
    expect(xs(plan, { xs: [] })).toEqual([0]);
    // The second element fails: the candidate is dropped, and the scan stops there.
    expect(xs(plan, { xs: [1, -1, 3] })).toEqual([]);
  });

  it("`not` fails when its body completes and succeeds when it fails", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        {
          op: "scan",
          source: 3,
          key: 4,
          value: 5,
          body: [{ op: "not", body: [{ op: "equal", a: L(5), b: N("2") }] }, ...emit(5)],
        },
      ]),
    );
    expect(xs(plan, { xs: [1, 2, 3] })).toEqual([1, 3]);
  });
});

describe("tests and data access", () => {
  it("dots into objects, arrays (integer indices) and sets", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("a"), target: 3 },
        { op: "dot", source: 3, key: N("1"), target: 4 },
        { op: "dot", source: 4, key: N("1.0"), target: 5 },
        ...emit(5),
      ]),
    );
    const input = makeObject([
      [makeString("a"), fromJSON([0, makeObject([[fromJSON(1), makeString("one")]])])],
    ]);
    expect(interpret(plan, "main", input, makeObject()).map(formatValue)).toEqual(['{"x": "one"}']);
    expect(run(plan, { a: [0] })).toEqual([]);
  });

  it("compares by value (1 == 1.0) and checks types and lengths", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("v"), target: 3 },
        { op: "equal", a: L(3), b: N("1.0") },
        { op: "dot", source: 0, key: S("arr"), target: 4 },
        { op: "isarray", source: 4 },
        { op: "len", source: 4, target: 5 },
        { op: "isobject", source: 0 },
        { op: "dot", source: 0, key: S("s"), target: 6 },
        { op: "len", source: 6, target: 7 },
        { op: "makearray", capacity: 2, target: 8 },
        { op: "arrayappend", array: 8, value: L(5) },
        { op: "arrayappend", array: 8, value: L(7) },
        ...emit(8),
      ]),
    );
    expect(xs(plan, { v: 1, arr: [1, 2, 3], s: "åäö" })).toEqual([[3, 3]]);
    expect(xs(plan, { v: 2, arr: [1, 2, 3], s: "åäö" })).toEqual([]);
    expect(xs(plan, { v: 1, arr: {}, s: "åäö" })).toEqual([]);
    expect(xs(plan, { v: 1, arr: [], s: 5 })).toEqual([]);
  });

  it("fails `len` on scalars and `isdefined` on unset locals", () => {
    const plan = planOf(queryFn([{ op: "isdefined", local: 20 }, ...emit(0)]));
    expect(run(plan, 1)).toEqual([]);
  });
});

describe("calls", () => {
  it("fails a builtin call on a type error or an undefined result", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("a"), target: 3 },
        { op: "callbuiltin", name: "plus", args: [L(3), N("1")], target: 4, site: site("plus") },
        ...emit(4),
      ]),
    );
    expect(xs(plan, { a: 1 })).toEqual([2]);
    expect(xs(plan, { a: "x" })).toEqual([]);
    const maxPlan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("a"), target: 3 },
        { op: "callbuiltin", name: "max", args: [L(3)], target: 4, site: site("max") },
        ...emit(4),
      ]),
    );
    expect(xs(maxPlan, { a: [] })).toEqual([]);
  });

  it("uses replacement builtins and a fixed clock", () => {
    const calls: string[] = [];
    const upper: BuiltinDef = {
      arity: 1,
      fn: ([x]) => (x?.type === "string" ? makeString(`<${x.value}>`) : undefined),
      impl: ([x]) => {
        calls.push(x ? formatValue(x) : "?");
        return x?.type === "string" ? makeString(`<${x.value}>`) : undefined;
      },
    };
    const plan = planOf(
      queryFn([
        { op: "callbuiltin", name: "upper", args: [S("a")], target: 3, site: site("upper") },
        { op: "callbuiltin", name: "time.now_ns", args: [], target: 4, site: site("time.now_ns") },
        { op: "callbuiltin", name: "time.now_ns", args: [], target: 5, site: site("time.now_ns") },
        { op: "equal", a: L(4), b: L(5) },
        { op: "makearray", capacity: 2, target: 6 },
        { op: "arrayappend", array: 6, value: L(3) },
        { op: "arrayappend", array: 6, value: L(4) },
        ...emit(6),
      ]),
    );
    let ticks = 0n;
    const now = () => ++ticks;
    expect(xs(plan, undefined, {}, { builtins: new Map([["upper", upper]]), now })).toEqual([["<a>", 1]]);
    expect(calls).toEqual(['"a"']);
    expect(xs(plan, undefined, {}, { now })).toEqual([["A", 2]]);
  });

  it("rejects calls of builtins with the wrong number of arguments", () => {
    const plan = planOf(
      queryFn([{ op: "callbuiltin", name: "plus", args: [N("1")], target: 3, site: site("plus") }]),
    );
    expect(() => run(plan)).toThrow(IRError);
  });

  it("calls functions with arguments; an undefined result fails the call", () => {
    // f(x) := x * 2 if x > 0
    const f = ruleFn(
      "f",
      [
        { op: "callbuiltin", name: "gt", args: [L(2), N("0")], target: 3, site: site("gt") },
        { op: "notequal", a: L(3), b: { kind: "bool", value: false } },
        { op: "callbuiltin", name: "mul", args: [L(2), N("2")], target: 4, site: site("mul") },
        {
          op: "assignonce",
          source: L(4),
          target: 10,
          error: site("functions must not produce multiple outputs for same inputs"),
        },
      ],
      { params: [0, 1, 2] },
    );
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        {
          op: "scan",
          source: 3,
          key: 4,
          value: 5,
          body: [{ op: "callfunc", func: "f", args: [L(0), L(1), L(5)], target: 6 }, ...emit(6)],
        },
      ]),
      f,
    );
    expect(xs(plan, { xs: [1, -1, 2] })).toEqual([2, 4]);
  });
});

describe("memoization", () => {
  /** A rule `r` whose body calls the counting builtin `tick`. */
  function counting(): {
    plan: (body: Stmt[]) => IRPlan;
    builtins: Map<string, BuiltinDef>;
    count: () => number;
  } {
    let n = 0;
    const tick: BuiltinDef = {
      arity: 0,
      fn: () => fromJSON(++n),
      impl: () => fromJSON(++n),
    };
    const r = ruleFn("r", [
      { op: "callbuiltin", name: "tick", args: [], target: 3, site: site("tick") },
      { op: "dot", source: 0, key: S("k"), target: 4 },
      { op: "makearray", capacity: 2, target: 5 },
      { op: "arrayappend", array: 5, value: L(3) },
      { op: "arrayappend", array: 5, value: L(4) },
      { op: "assign", source: L(5), target: 10 },
    ]);
    return {
      plan: (body) => planOf(queryFn(body), r),
      builtins: new Map([["tick", tick]]),
      count: () => n,
    };
  }

  it("computes a rule without arguments once per evaluation", () => {
    const c = counting();
    const plan = c.plan([
      { op: "callfunc", func: "r", args: [L(0), L(1)], target: 3 },
      { op: "callfunc", func: "r", args: [L(0), L(1)], target: 4 },
      { op: "makearray", capacity: 2, target: 5 },
      { op: "arrayappend", array: 5, value: L(3) },
      { op: "arrayappend", array: 5, value: L(4) },
      ...emit(5),
    ]);
    expect(xs(plan, { k: "a" }, {}, { builtins: c.builtins })).toEqual([
      [
        [1, "a"],
        [1, "a"],
      ],
    ]);
    expect(xs(plan, { k: "a" }, {}, { builtins: c.builtins })).toEqual([
      [
        [2, "a"],
        [2, "a"],
      ],
    ]);
  });

  it("memoizes undefined results too", () => {
    const c = counting();
    const plan = c.plan([
      { op: "block", body: [{ op: "callfunc", func: "r", args: [L(0), L(1)], target: 3 }] },
      { op: "block", body: [{ op: "callfunc", func: "r", args: [L(0), L(1)], target: 4 }] },
      ...emit(0),
    ]);
    expect(run(plan, 1, {}, { builtins: c.builtins })).toEqual([{ x: 1 }]);
    expect(c.count()).toBe(1);
  });

  it("keeps values per memo epoch: `with` bodies recompute, the outer epoch is restored", () => {
    const c = counting();
    // r; with input.k as "b" { r }; r
    const plan = c.plan([
      { op: "callfunc", func: "r", args: [L(0), L(1)], target: 3 },
      { op: "upsert", source: 0, path: [S("k")], value: S("b"), target: 4 },
      { op: "memoenter", save: 5, epoch: 6 },
      {
        op: "block",
        body: [
          { op: "callfunc", func: "r", args: [L(4), L(1)], target: 7 },
          { op: "memoset", epoch: 5 },
          {
            op: "block",
            body: [
              { op: "callfunc", func: "r", args: [L(0), L(1)], target: 8 },
              { op: "makearray", capacity: 3, target: 9 },
              { op: "arrayappend", array: 9, value: L(3) },
              { op: "arrayappend", array: 9, value: L(7) },
              { op: "arrayappend", array: 9, value: L(8) },
              ...emit(9),
            ],
          },
          { op: "memoset", epoch: 6 },
        ],
      },
      { op: "memoset", epoch: 5 },
    ]);
    expect(xs(plan, { k: "a" }, {}, { builtins: c.builtins })).toEqual([
      [
        [1, "a"],
        [2, "b"],
        [1, "a"],
      ],
    ]);
    expect(c.count()).toBe(2);
  });

  it("rejects memoset of a local that holds no epoch", () => {
    const plan = planOf(queryFn([{ op: "memoset", epoch: 3 }]));
    expect(() => run(plan)).toThrow(IRError);
  });
});

describe("construction", () => {
  it("builds arrays, sets and objects", () => {
    const plan = planOf(
      queryFn([
        { op: "makeset", target: 3 },
        { op: "setadd", set: 3, value: N("2") },
        { op: "setadd", set: 3, value: N("1") },
        { op: "setadd", set: 3, value: N("2.0") },
        { op: "makeobject", target: 4 },
        { op: "objectinsert", object: 4, key: S("s"), value: L(3), error: undefined },
        { op: "objectinsert", object: 4, key: N("1"), value: { kind: "null" }, error: undefined },
        { op: "objectinsert", object: 4, key: N("1"), value: T, error: undefined },
        ...emit(4),
      ]),
    );
    expect(xs(plan)).toEqual([{ "1": true, s: [1, 2] }]);
  });

  it("raises conflicts with the site's message", () => {
    const conflict = site("complete rules must not produce multiple outputs");
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("xs"), target: 3 },
        {
          op: "scan",
          source: 3,
          key: 4,
          value: 5,
          body: [{ op: "assignonce", source: L(5), target: 6, error: conflict }],
        },
        ...emit(6),
      ]),
    );
    expect(xs(plan, { xs: [1, 1.0, 1] })).toEqual([1]);
    expect(() => run(plan, { xs: [1, 2] })).toThrow(RegoRuntimeError);
    expect(() => run(plan, { xs: [1, 2] })).toThrow(
      "policy.rego:3:1: complete rules must not produce multiple outputs",
    );
    try {
      run(plan, { xs: [1, 2] });
    } catch (e) {
      expect(e instanceof RegoRuntimeError && e.code).toBe("eval_conflict_error");
    }
  });

  it("raises object key conflicts only with an error site and a different value", () => {
    const keys = site("object keys must be unique");
    const insert = (error: ErrorSite | undefined): IRPlan =>
      planOf(
        queryFn([
          { op: "makeobject", target: 3 },
          { op: "dot", source: 0, key: S("xs"), target: 4 },
          {
            op: "scan",
            source: 4,
            key: 5,
            value: 6,
            body: [{ op: "objectinsert", object: 3, key: S("k"), value: L(6), error }],
          },
          ...emit(3),
        ]),
      );
    expect(xs(insert(keys), { xs: [1, 1] })).toEqual([{ k: 1 }]);
    expect(() => run(insert(keys), { xs: [1, 2] })).toThrow("object keys must be unique");
    expect(xs(insert(undefined), { xs: [1, 2] })).toEqual([{ k: 2 }]);
  });

  it("inserts paths, extending the objects path inserts made", () => {
    const keys = site("object keys must be unique");
    const plan = planOf(
      queryFn([
        { op: "makeobject", target: 4 },
        { op: "objectinsertpath", object: 4, path: [S("a"), S("b"), S("c")], value: N("1"), error: keys },
        { op: "objectinsertpath", object: 4, path: [S("a"), S("b"), S("d")], value: N("2"), error: keys },
        { op: "objectinsertpath", object: 4, path: [S("a"), S("b"), S("d")], value: N("2"), error: keys },
        { op: "objectinsertpath", object: 4, path: [S("a"), S("e")], value: N("3"), error: keys },
        ...emit(4),
      ]),
    );
    expect(xs(plan)).toEqual([{ a: { b: { c: 1, d: 2 }, e: 3 } }]);
  });

  it("copies shared objects it inserts into, never mutating them", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("shared"), target: 3 },
        { op: "makeobject", target: 4 },
        { op: "objectinsert", object: 4, key: S("a"), value: L(3), error: undefined },
        {
          op: "objectinsertpath",
          object: 4,
          path: [S("a"), S("b"), S("c")],
          value: N("1"),
          error: undefined,
        },
        {
          op: "objectinsertpath",
          object: 4,
          path: [S("a"), S("z"), S("y")],
          value: N("2"),
          error: undefined,
        },
        { op: "makearray", capacity: 2, target: 5 },
        { op: "arrayappend", array: 5, value: L(4) },
        { op: "arrayappend", array: 5, value: L(3) },
        ...emit(5),
      ]),
    );
    expect(xs(plan, { shared: { z: 0 } })).toEqual([[{ a: { z: { y: 2 }, b: { c: 1 } } }, { z: 0 }]]);
  });

  it("treats injecting into another value (not made by path inserts) as a conflict", () => {
    const keys = site("object keys must be unique");
    // p[q].r := {"s": {"t": 1}} with q = "q", and p.q.r.s.u := 42: OPA reports a conflict.
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("v"), target: 3 },
        { op: "makeobject", target: 4 },
        { op: "objectinsertpath", object: 4, path: [S("q"), S("r")], value: L(3), error: keys },
        {
          op: "objectinsertpath",
          object: 4,
          path: [S("q"), S("r"), S("s"), S("u")],
          value: N("42"),
          error: keys,
        },
        ...emit(4),
      ]),
    );
    expect(() => run(plan, { v: { s: { t: 1 } } })).toThrow(RegoRuntimeError);
  });

  it("raises a conflict when a path insert meets a different value or a non-object", () => {
    const keys = site("object keys must be unique");
    const plan = (value: string): IRPlan =>
      planOf(
        queryFn([
          { op: "makeobject", target: 3 },
          { op: "objectinsertpath", object: 3, path: [S("a"), S("b")], value: N("1"), error: keys },
          { op: "objectinsertpath", object: 3, path: [S("a"), S("b")], value: N(value), error: keys },
          ...emit(3),
        ]),
      );
    expect(xs(plan("1"))).toEqual([{ a: { b: 1 } }]);
    expect(() => run(plan("2"))).toThrow(RegoRuntimeError);
    const through = planOf(
      queryFn([
        { op: "makeobject", target: 3 },
        { op: "objectinsert", object: 3, key: S("a"), value: N("1"), error: keys },
        { op: "objectinsertpath", object: 3, path: [S("a"), S("b")], value: N("2"), error: keys },
      ]),
    );
    expect(() => run(through)).toThrow("object keys must be unique");
  });

  it("adds to sets at paths, copying shared sets", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("base"), target: 3 },
        { op: "makeobject", target: 4 },
        { op: "objectinsert", object: 4, key: S("p"), value: L(3), error: undefined },
        { op: "objectsetaddpath", object: 4, path: [S("p"), S("q")], value: S("x") },
        { op: "objectsetaddpath", object: 4, path: [S("p"), S("q")], value: S("y") },
        { op: "objectsetaddpath", object: 4, path: [S("r")], value: S("z") },
        { op: "makearray", capacity: 2, target: 5 },
        { op: "arrayappend", array: 5, value: L(4) },
        { op: "arrayappend", array: 5, value: L(3) },
        ...emit(5),
      ]),
    );
    const base = makeObject([[makeString("q"), makeSet([makeString("w")])]]);
    const input = makeObject([[makeString("base"), base]]);
    const got = interpret(plan, "main", input, makeObject()).map(formatValue);
    expect(got).toEqual(['{"x": [{"p": {"q": {"w", "x", "y"}}, "r": {"z"}}, {"q": {"w"}}]}']);
  });

  it("upserts into copies, creating missing objects", () => {
    const plan = planOf(
      queryFn([
        { op: "upsert", source: 0, path: [S("a"), S("b")], value: N("1"), target: 3 },
        { op: "upsert", source: 0, path: [], value: S("all"), target: 4 },
        { op: "makearray", capacity: 3, target: 5 },
        { op: "arrayappend", array: 5, value: L(3) },
        { op: "arrayappend", array: 5, value: L(4) },
        ...emit(5),
      ]),
    );
    expect(xs(plan, { a: { c: 2 }, d: 3 })).toEqual([[{ a: { b: 1, c: 2 }, d: 3 }, "all"]]);
    expect(xs(plan, { a: "scalar" })).toEqual([[{ a: { b: 1 } }, "all"]]);
    const noInput = planOf(
      queryFn([{ op: "upsert", source: 0, path: [S("a")], value: N("1"), target: 3 }, ...emit(3)]),
    );
    expect(xs(noInput)).toEqual([{ a: 1 }]);
  });

  it("merges objects deeply without mutating them; fails on non-objects", () => {
    const plan = planOf(
      queryFn([
        { op: "dot", source: 0, key: S("a"), target: 3 },
        { op: "dot", source: 0, key: S("b"), target: 4 },
        { op: "objectmerge", a: 3, b: 4, target: 5 },
        { op: "makearray", capacity: 2, target: 6 },
        { op: "arrayappend", array: 6, value: L(5) },
        { op: "arrayappend", array: 6, value: L(3) },
        ...emit(6),
      ]),
    );
    expect(xs(plan, { a: { x: { y: 1, z: 2 }, k: 1 }, b: { x: { y: 3 }, k: { n: 1 } } })).toEqual([
      [
        { x: { y: 3, z: 2 }, k: { n: 1 } },
        { x: { y: 1, z: 2 }, k: 1 },
      ],
    ]);
    expect(xs(plan, { a: { x: 1 }, b: [1] })).toEqual([]);
  });
});

describe("print", () => {
  function printPlan(...args: Stmt[][]): IRPlan {
    const body: Stmt[] = [];
    const locals: number[] = [];
    args.forEach((fill, i) => {
      const local = 3 + i;
      body.push(
        { op: "makeset", target: local },
        { op: "block", body: fill.map((s) => ({ ...s, set: local }) as Stmt) },
      );
      locals.push(local);
    });
    body.push({ op: "print", args: locals, site: site("print") });
    return planOf(queryFn([...body, ...emit(0)]));
  }

  const add = (value: Operand): Stmt => ({ op: "setadd", set: -1, value });

  it("prints each argument's values space-separated, strings raw and <undefined> for none", () => {
    const lines: string[] = [];
    const sites: ErrorSite[] = [];
    const plan = printPlan(
      [add(S("hello"))],
      [add(N("1.0"))],
      [],
      [{ op: "dot", source: 0, key: S("o"), target: 20 }, add(L(20))],
    );
    run(
      plan,
      { o: { a: ["b", null] } },
      {},
      {
        print: (line: string, s: ErrorSite) => {
          lines.push(line);
          sites.push(s);
        },
      },
    );
    expect(lines).toEqual(['hello 1.0 <undefined> {"a": ["b", null]}']);
    expect(sites[0]?.line).toBe(3);
  });

  it("prints one line per combination of values, as OPA does", () => {
    const lines: string[] = [];
    const plan = printPlan([add(S("x")), add(S("y"))], [add(N("1")), add(N("2"))]);
    run(plan, 0, {}, { print: (line: string) => lines.push(line) });
    expect(lines).toEqual(["x 1", "x 2", "y 1", "y 2"]);
  });

  it("is silent without a sink", () => {
    const plan = printPlan([add(S("x"))]);
    expect(run(plan, 0)).toEqual([{ x: 0 }]);
  });
});

describe("value semantics through the interpreter", () => {
  it("keeps number text in results", () => {
    const plan = planOf(queryFn([{ op: "assign", source: N("1.0"), target: 3 }, ...emit(3)]));
    const [binding] = interpret(plan, "main", undefined, makeObject());
    expect(formatValue(binding as Value)).toBe('{"x": 1.0}');
  });
});
