/**
 * The planner: kernel rules and queries (from the compile stage) to IR functions.
 *
 * Bodies are planned in continuation-passing style, like OPA's planner: planning an expression
 * takes "the rest of the body" as a callback, so that iteration (a `scan`) nests everything that
 * follows inside its loop body, and a failing statement abandons exactly the current candidate
 * solution.
 *
 * Each rule group (document) becomes one function `(input, data, args…) → value`. References to
 * `data` are resolved against the rule groups at plan time: a group at or above the path is
 * called, groups below it are assembled into an object merged with the base document.
 *
 * `with` on input and base data rebinds the input/data locals for its body; `with` on rules or
 * functions plans specialized copies of the functions that can reach them ("mock contexts").
 */
import { lookupBuiltin } from "../builtins/catalog.ts";
import { sourceName } from "../compile/index.ts";
import type {
  CompiledPolicy,
  KBody,
  KCallee,
  KExpr,
  KRule,
  KTerm,
  KWith,
  RuleGroup,
} from "../compile/kernel.ts";
import { RegoError } from "../errors.ts";
import { type ExprSite, type RuleSite, TRACE_BUILTIN, TraceKind, type TraceSite } from "../trace.ts";
import {
  DATA,
  type ErrorSite,
  INPUT,
  type IRFunction,
  type IRPlan,
  type Local,
  type Operand,
  type Stmt,
} from "./ir.ts";

export interface PlanEntrypoint {
  /** Entrypoint name as the SDK sees it (`writ/decision`). */
  name: string;
  /** The query to plan (from `CompiledPolicy.queries`). */
  query: string;
}

/** A rule or function replaced by `with` in a mock context. */
type Replacement =
  | { kind: "function"; path: string[] }
  | { kind: "builtin"; name: string }
  | { kind: "value"; term: KTerm }
  /** A value computed where the `with` is (it reads local vars), carried in `data` (see MOCK_ROOT). */
  | { kind: "carried"; key: string };

/**
 * Inside a `with` body that replaces a function by a value computed from local vars, the value
 * travels to the functions that call it in the data document under this key, which no Rego
 * reference can spell (it starts with NUL) and which exists only inside that body.
 */
const MOCK_ROOT = "\u0000writ_mocks";

interface MockContext {
  id: string;
  /** Group ids whose value comes from the (mocked) data document instead of their rules. */
  shadowed: ReadonlySet<string>;
  /** Full mocked data paths (group-relative upserts for groups above them). */
  dataPaths: ReadonlyArray<readonly string[]>;
  callees: ReadonlyMap<string, Replacement>;
}

const ROOT_CONTEXT: MockContext = { id: "", shadowed: new Set(), dataPaths: [], callees: new Map() };

interface Env {
  vars: ReadonlyMap<string, Local>;
  input: Local;
  data: Local;
  ctx: MockContext;
}

type Cont = (env: Env) => void;
type TermCont = (operand: Operand, env: Env) => void;

class FunctionBuilder {
  private nextLocal: number;
  private target: Stmt[];
  /** Failure scopes currently open around the emission point. */
  depth = 0;

  constructor(
    readonly name: string,
    paramCount: number,
  ) {
    this.nextLocal = paramCount;
    this.target = [];
  }

  local(): Local {
    return this.nextLocal++;
  }

  get localCount(): number {
    return this.nextLocal;
  }

  emit(stmt: Stmt): void {
    this.target.push(stmt);
  }

  /** Collects what `fill` emits into a new statement list (one failure scope deeper). */
  nested(fill: () => void): Stmt[] {
    const saved = this.target;
    const body: Stmt[] = [];
    this.target = body;
    this.depth++;
    try {
      fill();
    } finally {
      this.depth--;
      this.target = saved;
    }
    return body;
  }

  block(fill: () => void): void {
    this.emit({ op: "block", body: this.nested(fill) });
  }

  /** Emits a `break` from the current position to just after the scope opened at `scopeDepth`. */
  breakTo(scopeDepth: number): void {
    this.emit({ op: "break", depth: this.depth - scopeDepth });
  }

  takeBody(): Stmt[] {
    return this.target;
  }
}

const groupId = (path: readonly string[]) => path.join("/");
const calleeKey = (c: KCallee) =>
  c.kind === "builtin" ? `builtin:${c.name}` : `function:${c.path.join("/")}`;

function site(file: string, loc: { line: number; col: number }, message: string): ErrorSite {
  return { file, line: loc.line, col: loc.col, message };
}

export interface PlanOptions {
  /** Trace rules and body expressions (`../trace.ts`): for explanations and coverage, never for serving. */
  instrument?: boolean;
  /** Builtins a call of which is an error (OPA's unsafe builtins), with what to do instead. */
  refusedBuiltins?: ReadonlyMap<string, string>;
}

export class Planner {
  private readonly functions = new Map<string, IRFunction>();
  private readonly pending: Array<() => void> = [];
  private readonly builtinsUsed = new Set<string>();
  private readonly groupIds: string[];
  readonly errors: RegoError[] = [];
  /** The trace points of an instrumented plan, by id; the same source place has one id. */
  readonly sites: TraceSite[] = [];
  private readonly siteIds = new Map<string, number>();
  /** The rule whose body is being planned (its site id), when instrumenting. */
  private tracedRule: number | undefined;

  constructor(
    private readonly policy: CompiledPolicy,
    private readonly options: PlanOptions = {},
  ) {
    this.groupIds = [...policy.groups.keys()].sort();
  }

  plan(entrypoints: readonly PlanEntrypoint[]): IRPlan {
    if (this.options.instrument) this.registerSites();
    const ep = entrypoints.map((e) => {
      const query = this.policy.queries.find((q) => q.name === e.query);
      if (!query) throw new Error(`planner: no compiled query named ${e.query}`);
      const func = `query:${e.name}`;
      this.planQuery(func, query.body, query.outputs);
      return { name: e.name, func };
    });
    while (this.pending.length > 0) this.pending.shift()!();
    return {
      functions: [...this.functions.values()],
      entrypoints: ep,
      builtins: [...this.builtinsUsed].sort(),
    };
  }

  // ------------------------------------------------------------------------------- functions

  private planQuery(name: string, body: KBody, outputs: ReadonlyArray<{ name: string; var: string }>): void {
    const fb = new FunctionBuilder(name, 2);
    const result = fb.local();
    const env: Env = { vars: new Map(), input: INPUT, data: DATA, ctx: ROOT_CONTEXT };
    fb.block(() => {
      this.body(fb, body, 0, env, (done) => {
        const obj = fb.local();
        fb.emit({ op: "makeobject", target: obj });
        for (const output of outputs) {
          const local = done.vars.get(output.var);
          if (local === undefined) continue;
          fb.emit({
            op: "objectinsert",
            object: obj,
            key: { kind: "string", value: output.name },
            value: { kind: "local", local },
            error: undefined,
          });
        }
        fb.emit({ op: "resultsetadd", value: obj });
      });
    });
    this.functions.set(name, {
      name,
      params: [INPUT, DATA],
      result,
      body: fb.takeBody(),
      localCount: fb.localCount,
      memoize: false,
    });
  }

  /** The function computing `group` in `ctx`, planned on first use. */
  private groupFunction(group: RuleGroup, ctx: MockContext): string {
    const name = `g:${groupId(group.path)}${ctx.id ? `@${ctx.id}` : ""}`;
    if (!this.functions.has(name)) {
      // Reserve the name first: recursion through `with` contexts must not loop.
      this.functions.set(name, { name, params: [], result: 0, body: [], localCount: 0, memoize: false });
      this.pending.push(() => this.planGroup(name, group, ctx));
    }
    return name;
  }

  private planGroup(name: string, group: RuleGroup, ctx: MockContext): void {
    const fb = new FunctionBuilder(name, 2 + group.arity);
    const params = [INPUT, DATA];
    for (let i = 0; i < group.arity; i++) params.push(2 + i);
    const result = fb.local();
    const env: Env = { vars: new Map(), input: INPUT, data: DATA, ctx };
    const first = group.rules[0] ?? group.defaultRule!;
    const file = first.file;

    fb.block(() => {
      switch (group.kind) {
        case "complete":
        case "function": {
          const name = `data.${group.path.join(".")}`;
          const message =
            group.kind === "function"
              ? `functions must not produce multiple outputs for same inputs: function ${name} produced conflicting values for the same inputs`
              : `complete rules must not produce multiple outputs: rule ${name} produced conflicting values`;
          for (const rule of group.rules)
            this.planChain(fb, rule, env, result, file, message, params.slice(2));
          if (group.defaultRule) {
            const d = group.defaultRule;
            this.tracingRule(d, () =>
              fb.block(() => {
                fb.emit({ op: "isundefined", local: result });
                this.withArgs(fb, d, env, params.slice(2), (argEnv) => {
                  this.term(fb, d.value, argEnv, (v) => {
                    fb.emit({ op: "assign", source: v, target: result });
                    this.traceRuleFired(fb);
                  });
                });
              }),
            );
          }
          break;
        }
        case "multivalue": {
          fb.emit({ op: "makeset", target: result });
          for (const rule of group.rules) {
            this.tracingRule(rule, () =>
              fb.block(() =>
                this.body(fb, rule.body, 0, env, (done) =>
                  this.term(fb, rule.key!, done, (k) => {
                    fb.emit({ op: "setadd", set: result, value: k });
                    this.traceRuleFired(fb);
                  }),
                ),
              ),
            );
          }
          break;
        }
        case "object": {
          fb.emit({ op: "makeobject", target: result });
          for (const rule of group.rules) {
            const error = site(rule.file, rule.loc, "object keys must be unique");
            const element = rule.key;
            this.tracingRule(rule, () =>
              fb.block(() =>
                this.body(fb, rule.body, 0, env, (done) =>
                  this.terms(fb, rule.keyPath, done, (keys, env2) => {
                    if (element) {
                      return this.term(fb, element, env2, (v) => {
                        fb.emit({ op: "objectsetaddpath", object: result, path: keys, value: v });
                        this.traceRuleFired(fb);
                      });
                    }
                    this.term(fb, rule.value, env2, (v) => {
                      fb.emit(
                        keys.length === 1
                          ? { op: "objectinsert", object: result, key: keys[0]!, value: v, error }
                          : { op: "objectinsertpath", object: result, path: keys, value: v, error },
                      );
                      this.traceRuleFired(fb);
                    });
                  }),
                ),
              ),
            );
          }
          this.leafInjectionConflicts(fb, group, result, env, file);
          // Documents defined below an object rule's path belong to its value; sets defined
          // there join the sets the object's own `contains` rules build.
          for (const id of this.groupIds) {
            const below = this.policy.groups.get(id)!;
            if (!id.startsWith(`${groupId(group.path)}/`) || below.kind === "function") continue;
            const rel = below.path
              .slice(group.path.length)
              .map((s): Operand => ({ kind: "string", value: s }));
            const value = fb.local();
            fb.block(() => {
              this.callGroup(fb, below, env, value);
              if (below.kind === "multivalue") {
                const key = fb.local();
                const elem = fb.local();
                fb.emit({
                  op: "scan",
                  source: value,
                  key,
                  value: elem,
                  body: fb.nested(() =>
                    fb.emit({
                      op: "objectsetaddpath",
                      object: result,
                      path: rel,
                      value: { kind: "local", local: elem },
                    }),
                  ),
                });
                return;
              }
              fb.emit({
                op: "objectinsertpath",
                object: result,
                path: rel,
                value: { kind: "local", local: value },
                error: site(file, first.loc, "object keys must be unique"),
              });
            });
          }
          break;
        }
      }
    });

    this.functions.set(name, {
      name,
      params,
      result,
      body: fb.takeBody(),
      localCount: fb.localCount,
      memoize: group.arity === 0,
    });
  }

  /** Binds a function rule's argument patterns to the parameter locals. */
  private withArgs(fb: FunctionBuilder, rule: KRule, env: Env, params: readonly Local[], k: Cont): void {
    const bindArg = (i: number, e: Env): void => {
      if (i === rule.args.length) return k(e);
      this.unifyLocal(fb, rule.args[i]!, params[i]!, e, (e2) => bindArg(i + 1, e2));
    };
    bindArg(0, env);
  }

  /**
   * A rule and its `else` chain: each element's solutions are assigned once to a chain-local
   * value; a later element runs only while that value is undefined.
   */
  private planChain(
    fb: FunctionBuilder,
    rule: KRule,
    env: Env,
    result: Local,
    file: string,
    message: string,
    params: readonly Local[],
  ): void {
    const elements = [rule, ...rule.chain];
    const chainValue = elements.length > 1 ? fb.local() : result;
    elements.forEach((element, i) => {
      const error = site(element.file, element.loc, message);
      this.tracingRule(element, () =>
        fb.block(() => {
          if (i > 0) fb.emit({ op: "isundefined", local: chainValue });
          this.withArgs(fb, element, env, params, (argEnv) =>
            this.body(fb, element.body, 0, argEnv, (done) =>
              this.term(fb, element.value, done, (v) => {
                fb.emit({ op: "assignonce", source: v, target: chainValue, error });
                this.traceRuleFired(fb);
              }),
            ),
          );
        }),
      );
    });
    if (chainValue !== result) {
      fb.block(() => {
        fb.emit({ op: "isdefined", local: chainValue });
        fb.emit({
          op: "assignonce",
          source: { kind: "local", local: chainValue },
          target: result,
          error: site(file, rule.loc, message),
        });
      });
    }
  }

  // ------------------------------------------------------------------------------ tracing

  /** Plans `fill` (a rule's body) with its trace points when instrumenting. */
  private tracingRule(rule: KRule, fill: () => void): void {
    if (!this.options.instrument) return fill();
    const outer = this.tracedRule;
    this.tracedRule = this.ruleSite(rule);
    try {
      fill();
    } finally {
      this.tracedRule = outer;
    }
  }

  /**
   * Every rule's trace points, registered before planning: coverage lists the rules nothing
   * refers to as well, which are never planned.
   */
  private registerSites(): void {
    const rules: KRule[] = [];
    for (const id of this.groupIds) {
      const group = this.policy.groups.get(id)!;
      for (const rule of [...group.rules, ...(group.defaultRule ? [group.defaultRule] : [])])
        rules.push(rule, ...rule.chain);
    }
    rules.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.loc.offset - b.loc.offset));
    for (const rule of rules) {
      const id = this.ruleSite(rule);
      const nested = (body: KBody): void => {
        for (const e of body) {
          this.exprSite(e, id);
          forEachNestedBody(e, nested);
        }
      };
      nested(rule.body);
    }
  }

  /** The site id of a rule, with its body's expressions. */
  private ruleSite(rule: KRule): number {
    const id = this.siteId(
      `rule:${rule.file}:${rule.loc.line}:${rule.loc.col}:${rule.path.join("/")}`,
      () => {
        const ruleSite: RuleSite = {
          kind: "rule",
          file: rule.file,
          line: rule.loc.line,
          col: rule.loc.col,
          rule: `data.${rule.path.join(".")}`,
          default: rule.default,
          body: [],
        };
        return ruleSite;
      },
    );
    const site = this.sites[id];
    if (site?.kind === "rule" && site.body.length === 0)
      site.body = rule.body.map((e) => this.exprSite(e, id));
    return id;
  }

  private traceRuleFired(fb: FunctionBuilder): void {
    if (this.tracedRule !== undefined) this.trace(fb, TraceKind.rule, this.tracedRule, undefined);
  }

  private exprSite(e: KExpr, rule: number): number {
    const file = this.fileOf(e);
    return this.siteId(`expr:${file}:${e.loc.line}:${e.loc.col}:${e.kind}:${rule}`, () => {
      const exprSite: ExprSite = { kind: "expr", file, line: e.loc.line, col: e.loc.col, rule };
      return exprSite;
    });
  }

  private siteId(key: string, make: () => TraceSite): number {
    let id = this.siteIds.get(key);
    if (id === undefined) {
      id = this.sites.length;
      this.sites.push(make());
      this.siteIds.set(key, id);
    }
    return id;
  }

  /**
   * A call of the trace builtin: `(kind, site, bindings)`, the bindings an object of the named
   * variables that hold a value (`null` for events without them). Its result is always defined.
   */
  private trace(
    fb: FunctionBuilder,
    kind: TraceKind,
    id: number,
    bindings: ReadonlyArray<[name: string, local: Local]> | undefined,
  ): void {
    let third: Operand = { kind: "null" };
    if (bindings !== undefined) {
      const obj = fb.local();
      fb.emit({ op: "makeobject", target: obj });
      for (const [name, local] of bindings) {
        fb.block(() => {
          fb.emit({ op: "isdefined", local });
          fb.emit({
            op: "objectinsert",
            object: obj,
            key: { kind: "string", value: name },
            value: { kind: "local", local },
            error: undefined,
          });
        });
      }
      third = { kind: "local", local: obj };
    }
    const where = this.sites[id]!;
    this.builtinsUsed.add(TRACE_BUILTIN);
    fb.emit({
      op: "callbuiltin",
      name: TRACE_BUILTIN,
      args: [{ kind: "number", value: String(kind) }, { kind: "number", value: String(id) }, third],
      target: fb.local(),
      site: site(where.file, where, "trace"),
    });
  }

  // ------------------------------------------------------------------------------- bodies

  private body(fb: FunctionBuilder, body: KBody, i: number, env: Env, k: Cont): void {
    if (i === body.length) return k(env);
    this.expr(fb, body[i]!, env, (next) => this.body(fb, body, i + 1, next, k));
  }

  private expr(fb: FunctionBuilder, e: KExpr, env: Env, k: Cont): void {
    const rule = this.tracedRule;
    if (rule === undefined) return this.untracedExpr(fb, e, env, k);
    const id = this.exprSite(e, rule);
    this.trace(fb, TraceKind.enter, id, undefined);
    this.untracedExpr(fb, e, env, (held) => {
      this.trace(fb, TraceKind.held, id, bindingsOf(e, held));
      k(held);
    });
  }

  private untracedExpr(fb: FunctionBuilder, e: KExpr, env: Env, k: Cont): void {
    switch (e.kind) {
      case "term":
        return this.term(fb, e.term, env, (v, env2) => {
          fb.emit({ op: "notequal", a: v, b: { kind: "bool", value: false } });
          k(env2);
        });
      case "unify":
        return this.unify(fb, e.left, e.right, env, k);
      case "call":
        return this.call(fb, e, env, k);
      case "not": {
        const found = fb.local();
        fb.emit({ op: "reset", target: found });
        const scope = fb.depth;
        fb.block(() =>
          this.body(fb, e.body, 0, env, () => {
            fb.emit({ op: "assign", source: { kind: "bool", value: true }, target: found });
            fb.breakTo(scope);
          }),
        );
        fb.emit({ op: "isundefined", local: found });
        return k(env);
      }
      case "every":
        return this.every(fb, e, env, k);
      case "with":
        return this.with(fb, e.mods, e.body, env, k);
    }
  }

  /**
   * `every k, v in domain { body }`: the domain must be a collection (the scan fails otherwise)
   * and the body must hold for each element; an element for which it does not sets `failed`.
   */
  private every(fb: FunctionBuilder, e: Extract<KExpr, { kind: "every" }>, env: Env, k: Cont): void {
    this.term(fb, e.domain, env, (domain, env2) => {
      const source = this.toLocal(fb, domain);
      const failed = fb.local();
      fb.emit({ op: "reset", target: failed });
      const key = fb.local();
      const value = fb.local();
      fb.emit({
        op: "scan",
        source,
        key,
        value,
        body: fb.nested(() => {
          const withKey: Env = { ...env2, vars: new Map(env2.vars).set(e.key.name, key) };
          this.unifyLocal(fb, e.value, value, withKey, (bound) => {
            const holds = fb.local();
            fb.emit({ op: "reset", target: holds });
            const scope = fb.depth;
            fb.block(() =>
              this.body(fb, e.body, 0, bound, () => {
                fb.emit({ op: "assign", source: { kind: "bool", value: true }, target: holds });
                fb.breakTo(scope);
              }),
            );
            fb.emit({ op: "isundefined", local: holds });
            fb.emit({ op: "assign", source: { kind: "bool", value: true }, target: failed });
          });
        }),
      });
      fb.emit({ op: "isundefined", local: failed });
      k(env2);
    });
  }

  private call(fb: FunctionBuilder, e: Extract<KExpr, { kind: "call" }>, env: Env, k: Cont): void {
    if (e.callee.kind === "builtin" && e.callee.name === "print") return this.print(fb, e, env, k);
    const relation = e.callee.kind === "builtin" && lookupBuiltin(e.callee.name)?.declaration.relation;
    this.terms(fb, e.args, env, (args, env2) => {
      const target = fb.local();
      this.invoke(fb, e.callee, args, target, env2, e.loc, this.fileOf(e));
      if (relation) return this.relationResults(fb, target, e.output, env2, k);
      if (e.output) return this.unifyLocal(fb, e.output, target, env2, k);
      fb.emit({ op: "notequal", a: { kind: "local", local: target }, b: { kind: "bool", value: false } });
      k(env2);
    });
  }

  /**
   * A relation (`walk`) yields several results: its implementation returns them all as an array,
   * and each is unified with the output in turn. Without an output the call holds when there is
   * at least one result.
   */
  private relationResults(
    fb: FunctionBuilder,
    results: Local,
    output: KTerm | undefined,
    env: Env,
    k: Cont,
  ): void {
    const key = fb.local();
    const value = fb.local();
    if (!output) {
      const size = fb.local();
      fb.emit({ op: "len", source: results, target: size });
      fb.emit({ op: "notequal", a: { kind: "local", local: size }, b: { kind: "number", value: "0" } });
      return k(env);
    }
    fb.emit({
      op: "scan",
      source: results,
      key,
      value,
      body: fb.nested(() => this.unifyLocal(fb, output, value, env, k)),
    });
  }

  private currentFile = "policy.rego";
  private fileOf(e: { loc: { file: string } }): string {
    return e.loc.file || this.currentFile;
  }

  /** Emits the call of a builtin or function, honouring `with` replacements. */
  private invoke(
    fb: FunctionBuilder,
    callee: KCallee,
    args: Operand[],
    target: Local,
    env: Env,
    loc: { line: number; col: number },
    file: string,
  ): void {
    const replacement = env.ctx.callees.get(calleeKey(callee));
    if (replacement) {
      switch (replacement.kind) {
        case "value":
          return this.term(fb, replacement.term, env, (v) => fb.emit({ op: "assign", source: v, target }));
        case "carried": {
          const mocks = fb.local();
          fb.emit({ op: "dot", source: env.data, key: { kind: "string", value: MOCK_ROOT }, target: mocks });
          fb.emit({ op: "dot", source: mocks, key: { kind: "string", value: replacement.key }, target });
          return;
        }
        case "builtin":
          return this.invoke(
            fb,
            { kind: "builtin", name: replacement.name },
            args,
            target,
            { ...env, ctx: ROOT_CONTEXT },
            loc,
            file,
          );
        case "function":
          // A replacement runs without the callee replacements around it ("a mock does not
          // call other mocks"); replaced data stays replaced.
          return this.invoke(
            fb,
            { kind: "function", path: replacement.path },
            args,
            target,
            { ...env, ctx: withCallees(env.ctx, new Map()) },
            loc,
            file,
          );
      }
    }
    if (callee.kind === "builtin") {
      const spec = lookupBuiltin(callee.name);
      const refused = this.options.refusedBuiltins?.get(callee.name);
      if (refused !== undefined) {
        this.errors.push(
          new RegoError(
            "rego_type_error",
            `unsafe built-in function calls in expression: ${callee.name} (${refused})`,
            { file, line: loc.line, col: loc.col, offset: 0 },
          ),
        );
      }
      if (spec?.implementation === "unavailable") {
        this.errors.push(
          new RegoError(
            "rego_type_error",
            `${callee.name} is not available to Writ policies: ${spec.reason ?? "Writ cannot run it"} (in tests, replace it with \`with\`)`,
            { file, line: loc.line, col: loc.col, offset: 0 },
          ),
        );
      }
      this.builtinsUsed.add(callee.name);
      fb.emit({ op: "callbuiltin", name: callee.name, args, target, site: site(file, loc, callee.name) });
      return;
    }
    const group = this.policy.groups.get(groupId(callee.path));
    if (group?.kind !== "function") {
      this.errors.push(
        new RegoError("rego_type_error", `undefined function data.${callee.path.join(".")}`, {
          file,
          line: loc.line,
          col: loc.col,
          offset: 0,
        }),
      );
      fb.emit({ op: "assign", source: { kind: "bool", value: false }, target });
      fb.emit({ op: "isundefined", local: target });
      return;
    }
    const func = this.groupFunction(group, env.ctx);
    fb.emit({
      op: "callfunc",
      func,
      args: [{ kind: "local", local: env.input }, { kind: "local", local: env.data }, ...args],
      target,
    });
  }

  /** `print`: each argument is the set of the values it takes (the compiler makes it `{v | v = arg}`). */
  private print(fb: FunctionBuilder, e: Extract<KExpr, { kind: "call" }>, env: Env, k: Cont): void {
    const locals: Local[] = [];
    for (const arg of e.args) {
      if (arg.type === "setcompr") {
        this.term(fb, arg, env, (set) => locals.push(this.toLocal(fb, set)));
        continue;
      }
      const values = fb.local();
      fb.emit({ op: "makeset", target: values });
      fb.block(() => this.term(fb, arg, env, (v) => fb.emit({ op: "setadd", set: values, value: v })));
      locals.push(values);
    }
    fb.emit({ op: "print", args: locals, site: site(this.fileOf(e), e.loc, "print") });
    k(env);
  }

  private with(fb: FunctionBuilder, mods: readonly KWith[], body: KBody, env: Env, k: Cont): void {
    let input = env.input;
    let data = env.data;
    const shadowed = new Set(env.ctx.shadowed);
    const dataPaths = [...env.ctx.dataPaths];
    const callees = new Map(env.ctx.callees);
    let changed = false;
    const apply = (i: number, e: Env): void => {
      if (i < mods.length) {
        const mod = mods[i]!;
        const target = mod.target;
        if (target.kind === "callee") {
          const key = calleeKey(target.callee);
          changed = true;
          if (mod.replacement) {
            callees.set(
              key,
              mod.replacement.kind === "builtin"
                ? { kind: "builtin", name: mod.replacement.name }
                : { kind: "function", path: mod.replacement.path },
            );
            return apply(i + 1, e);
          }
          if (!readsLocals(mod.value)) {
            callees.set(key, { kind: "value", term: mod.value });
            return apply(i + 1, e);
          }
          return this.term(fb, mod.value, e, (value, e2) => {
            const next = fb.local();
            fb.emit({
              op: "upsert",
              source: data,
              path: [
                { kind: "string", value: MOCK_ROOT },
                { kind: "string", value: key },
              ],
              value,
              target: next,
            });
            data = next;
            callees.set(key, { kind: "carried", key });
            apply(i + 1, e2);
          });
        }
        return this.term(fb, mod.value, e, (value, e2) => {
          const path = target.path.map((s): Operand => ({ kind: "string", value: s }));
          const next = fb.local();
          if (target.kind === "input") {
            if (path.length === 0) fb.emit({ op: "assign", source: value, target: next });
            else fb.emit({ op: "upsert", source: input, path, value, target: next });
            input = next;
          } else {
            fb.emit({ op: "upsert", source: data, path, value, target: next });
            data = next;
            const touched = this.groupIds.filter(
              (id) =>
                id === groupId(target.path) ||
                id.startsWith(`${groupId(target.path)}/`) ||
                groupId(target.path).startsWith(`${id}/`),
            );
            if (touched.length > 0) {
              for (const id of touched)
                if (id === groupId(target.path) || id.startsWith(`${groupId(target.path)}/`))
                  shadowed.add(id);
              dataPaths.push(target.path);
              changed = true;
            }
          }
          apply(i + 1, e2);
        });
      }
      const ctx = changed ? mockContext(shadowed, dataPaths, callees) : e.ctx;
      // Memoized rule values computed under the replacements must not leak out, and values
      // computed outside must not be used inside: the body runs in a fresh memo epoch, and
      // each solution hands on to the rest of the body in the outer epoch. Bindings made inside
      // the body stay visible after it.
      const saved = fb.local();
      const epoch = fb.local();
      fb.emit({ op: "memoenter", save: saved, epoch });
      const inner: Env = { vars: e.vars, input, data, ctx };
      fb.block(() =>
        this.body(fb, body, 0, inner, (done) => {
          fb.emit({ op: "memoset", epoch: saved });
          fb.block(() => k({ vars: done.vars, input: env.input, data: env.data, ctx: env.ctx }));
          fb.emit({ op: "memoset", epoch });
        }),
      );
      fb.emit({ op: "memoset", epoch: saved });
    };
    apply(0, env);
  }

  // ------------------------------------------------------------------------------- terms

  private isBound(t: KTerm, env: Env): boolean {
    return t.type !== "var" || t.name === "input" || t.name === "data" || env.vars.has(t.name);
  }

  /** True when the term has vars not yet bound outside refs (so it can only be a pattern). */
  private hasUnboundPatternVars(t: KTerm, env: Env): boolean {
    switch (t.type) {
      case "var":
        return !this.isBound(t, env);
      case "array":
        return t.items.some((i) => this.hasUnboundPatternVars(i, env));
      case "object":
        return t.entries.some(([, v]) => this.hasUnboundPatternVars(v, env));
      default:
        return false;
    }
  }

  private unify(fb: FunctionBuilder, left: KTerm, right: KTerm, env: Env, k: Cont): void {
    if (this.hasUnboundPatternVars(left, env)) {
      return this.term(fb, right, env, (r, env2) => this.unifyLocal(fb, left, this.toLocal(fb, r), env2, k));
    }
    if (this.hasUnboundPatternVars(right, env)) {
      return this.term(fb, left, env, (l, env2) => this.unifyLocal(fb, right, this.toLocal(fb, l), env2, k));
    }
    this.term(fb, left, env, (l, env2) =>
      this.term(fb, right, env2, (r, env3) => {
        fb.emit({ op: "equal", a: l, b: r });
        k(env3);
      }),
    );
  }

  /** Unifies a term (possibly a pattern with unbound vars) with the value in `local`. */
  private unifyLocal(fb: FunctionBuilder, t: KTerm, local: Local, env: Env, k: Cont): void {
    if (t.type === "var" && !this.isBound(t, env)) {
      return k({ ...env, vars: new Map(env.vars).set(t.name, local) });
    }
    if (t.type === "array" && this.hasUnboundPatternVars(t, env)) {
      fb.emit({ op: "isarray", source: local });
      const n = fb.local();
      fb.emit({ op: "len", source: local, target: n });
      fb.emit({
        op: "equal",
        a: { kind: "local", local: n },
        b: { kind: "number", value: String(t.items.length) },
      });
      const item = (i: number, e: Env): void => {
        if (i === t.items.length) return k(e);
        const elem = fb.local();
        fb.emit({ op: "dot", source: local, key: { kind: "number", value: String(i) }, target: elem });
        this.unifyLocal(fb, t.items[i]!, elem, e, (e2) => item(i + 1, e2));
      };
      return item(0, env);
    }
    if (t.type === "object" && this.hasUnboundPatternVars(t, env)) {
      fb.emit({ op: "isobject", source: local });
      const n = fb.local();
      fb.emit({ op: "len", source: local, target: n });
      fb.emit({
        op: "equal",
        a: { kind: "local", local: n },
        b: { kind: "number", value: String(t.entries.length) },
      });
      const entry = (i: number, e: Env): void => {
        if (i === t.entries.length) return k(e);
        const [key, value] = t.entries[i]!;
        this.term(fb, key, e, (kop, e2) => {
          const elem = fb.local();
          fb.emit({ op: "dot", source: local, key: kop, target: elem });
          this.unifyLocal(fb, value, elem, e2, (e3) => entry(i + 1, e3));
        });
      };
      return entry(0, env);
    }
    this.term(fb, t, env, (v, env2) => {
      fb.emit({ op: "equal", a: v, b: { kind: "local", local } });
      k(env2);
    });
  }

  private toLocal(fb: FunctionBuilder, op: Operand): Local {
    if (op.kind === "local") return op.local;
    const l = fb.local();
    fb.emit({ op: "assign", source: op, target: l });
    return l;
  }

  private terms(
    fb: FunctionBuilder,
    ts: readonly KTerm[],
    env: Env,
    k: (ops: Operand[], env: Env) => void,
  ): void {
    const ops: Operand[] = [];
    const next = (start: number, e: Env): void => {
      let i = start;
      // Simple terms neither iterate nor bind: take them in a loop, so that a literal of
      // thousands of items does not nest a continuation per item (and overflow the stack).
      for (; i < ts.length && isSimpleTerm(ts[i]!); i++) ops[i] = this.simpleTerm(fb, ts[i]!, e);
      if (i === ts.length) return k([...ops], e);
      this.term(fb, ts[i]!, e, (op, e2) => {
        ops[i] = op;
        next(i + 1, e2);
      });
    };
    next(0, env);
  }

  /** The operand of a simple term ({@link isSimpleTerm}): `term` answers it at once, exactly once. */
  private simpleTerm(fb: FunctionBuilder, t: KTerm, env: Env): Operand {
    let out: Operand | undefined;
    this.term(fb, t, env, (op) => {
      out = op;
    });
    if (out === undefined) throw new Error("planner: a simple term produced no operand");
    return out;
  }

  /** Evaluates a term to an operand; refs may iterate, so the rest runs in `k`. */
  private term(fb: FunctionBuilder, t: KTerm, env: Env, k: TermCont): void {
    switch (t.type) {
      case "null":
        return k({ kind: "null" }, env);
      case "boolean":
        return k({ kind: "bool", value: t.value }, env);
      case "number":
        return k({ kind: "number", value: t.value }, env);
      case "string":
        return k({ kind: "string", value: t.value }, env);
      case "var": {
        if (t.name === "input") {
          fb.emit({ op: "isdefined", local: env.input });
          return k({ kind: "local", local: env.input }, env);
        }
        if (t.name === "data") return this.dataRef(fb, [], env, k);
        const local = env.vars.get(t.name);
        if (local === undefined) {
          throw new Error(
            `planner: var ${sourceName(t.name)} used before it is bound (${t.loc.file}:${t.loc.line}:${t.loc.col})`,
          );
        }
        return k({ kind: "local", local }, env);
      }
      case "ref":
        return this.ref(fb, t, env, k);
      case "array":
        return this.terms(fb, t.items, env, (items, env2) => {
          const arr = fb.local();
          fb.emit({ op: "makearray", capacity: items.length, target: arr });
          for (const item of items) fb.emit({ op: "arrayappend", array: arr, value: item });
          k({ kind: "local", local: arr }, env2);
        });
      case "set":
        return this.terms(fb, t.items, env, (items, env2) => {
          const set = fb.local();
          fb.emit({ op: "makeset", target: set });
          for (const item of items) fb.emit({ op: "setadd", set, value: item });
          k({ kind: "local", local: set }, env2);
        });
      case "object": {
        const flat = t.entries.flat();
        return this.terms(fb, flat, env, (ops, env2) => {
          const obj = fb.local();
          fb.emit({ op: "makeobject", target: obj });
          for (let i = 0; i < ops.length; i += 2) {
            fb.emit({ op: "objectinsert", object: obj, key: ops[i]!, value: ops[i + 1]!, error: undefined });
          }
          k({ kind: "local", local: obj }, env2);
        });
      }
      case "arraycompr": {
        const arr = fb.local();
        fb.emit({ op: "makearray", capacity: 0, target: arr });
        fb.block(() =>
          this.body(fb, t.body, 0, env, (done) =>
            this.term(fb, t.term, done, (v) => fb.emit({ op: "arrayappend", array: arr, value: v })),
          ),
        );
        return k({ kind: "local", local: arr }, env);
      }
      case "setcompr": {
        const set = fb.local();
        fb.emit({ op: "makeset", target: set });
        fb.block(() =>
          this.body(fb, t.body, 0, env, (done) =>
            this.term(fb, t.term, done, (v) => fb.emit({ op: "setadd", set, value: v })),
          ),
        );
        return k({ kind: "local", local: set }, env);
      }
      case "objectcompr": {
        const obj = fb.local();
        fb.emit({ op: "makeobject", target: obj });
        const error = site(t.loc.file, t.loc, "object keys must be unique");
        fb.block(() =>
          this.body(fb, t.body, 0, env, (done) =>
            this.term(fb, t.key, done, (key, e2) =>
              this.term(fb, t.value, e2, (value) =>
                fb.emit({ op: "objectinsert", object: obj, key, value, error }),
              ),
            ),
          ),
        );
        return k({ kind: "local", local: obj }, env);
      }
    }
  }

  private ref(fb: FunctionBuilder, t: Extract<KTerm, { type: "ref" }>, env: Env, k: TermCont): void {
    if (t.head.type === "var" && t.head.name === "data") return this.dataRef(fb, t.path, env, k);
    this.term(fb, t.head, env, (head, env2) => this.path(fb, this.toLocal(fb, head), t.path, 0, env2, k));
  }

  /** Follows ref operands from `local`: bound operands are lookups, unbound vars iterate. */
  private path(
    fb: FunctionBuilder,
    local: Local,
    path: readonly KTerm[],
    i: number,
    env: Env,
    k: TermCont,
  ): void {
    if (i === path.length) return k({ kind: "local", local }, env);
    const operand = path[i]!;
    if (this.hasUnboundPatternVars(operand, env)) {
      const key = fb.local();
      const value = fb.local();
      fb.emit({
        op: "scan",
        source: local,
        key,
        value,
        body: fb.nested(() =>
          this.unifyLocal(fb, operand, key, env, (env2) => this.path(fb, value, path, i + 1, env2, k)),
        ),
      });
      return;
    }
    this.term(fb, operand, env, (key, env2) => {
      const target = fb.local();
      fb.emit({ op: "dot", source: local, key, target });
      this.path(fb, target, path, i + 1, env2, k);
    });
  }

  // ------------------------------------------------------------------------------- data

  /**
   * A rule defined below an object rule's leaves (`p.q.r.s.u := 42` under `p[q].r := {…}`) would
   * write inside another rule's value: as in OPA, that is a conflict when both are defined. The
   * check runs before documents below are merged in, so `result` holds the object rule's own
   * values; it applies when the object rule's leaves all sit at one depth.
   */
  private leafInjectionConflicts(
    fb: FunctionBuilder,
    group: RuleGroup,
    result: Local,
    env: Env,
    file: string,
  ): void {
    const valueRules = group.rules.filter((r) => !r.key);
    const depths = new Set(valueRules.map((r) => r.keyPath.length));
    if (valueRules.length === 0 || valueRules.length !== group.rules.length || depths.size !== 1) return;
    const [depth] = depths;
    for (const id of this.groupIds) {
      const below = this.policy.groups.get(id)!;
      if (!id.startsWith(`${groupId(group.path)}/`) || below.kind === "function") continue;
      const rel = below.path.slice(group.path.length);
      if (rel.length <= depth!) continue;
      const first = below.rules[0] ?? below.defaultRule;
      fb.block(() => {
        const value = fb.local();
        this.callGroup(fb, below, env, value);
        fb.emit({ op: "isdefined", local: value });
        let node: Local = result;
        for (const key of rel.slice(0, depth)) {
          const next = fb.local();
          fb.emit({ op: "dot", source: node, key: { kind: "string", value: key }, target: next });
          node = next;
        }
        // Both are defined: raise the conflict (an assign-once of a second, different value).
        const flag = fb.local();
        fb.emit({ op: "assign", source: { kind: "bool", value: false }, target: flag });
        fb.emit({
          op: "assignonce",
          source: { kind: "bool", value: true },
          target: flag,
          error: site(first?.file ?? file, first?.loc ?? { line: 0, col: 0 }, "object keys must be unique"),
        });
      });
    }
  }

  /** Value of the group, called with the current input and data. */
  private callGroup(fb: FunctionBuilder, group: RuleGroup, env: Env, target: Local): void {
    const func = this.groupFunction(group, env.ctx);
    fb.emit({
      op: "callfunc",
      func,
      args: [
        { kind: "local", local: env.input },
        { kind: "local", local: env.data },
      ],
      target,
    });
  }

  private isShadowed(id: string, ctx: MockContext): boolean {
    return ctx.shadowed.has(id);
  }

  /**
   * `data` followed by `path`. The longest ground prefix decides: a rule group at or above it is
   * called and the rest of the path is followed in its value; rule groups below it are assembled
   * into an object merged over the base document; otherwise it is base data.
   */
  private dataRef(fb: FunctionBuilder, path: readonly KTerm[], env: Env, k: TermCont): void {
    const ground: string[] = [];
    for (const p of path) {
      if (p.type !== "string") break;
      ground.push(p.value);
    }
    for (let n = 1; n <= ground.length; n++) {
      const id = groupId(ground.slice(0, n));
      const group = this.policy.groups.get(id);
      if (!group || this.isShadowed(id, env.ctx)) continue;
      if (group.kind === "function") {
        // A function is not a document: referring to it without calling it is undefined.
        fb.emit({ op: "isdefined", local: fb.local() });
        return;
      }
      const value = fb.local();
      this.callGroup(fb, group, env, value);
      const withMocks = this.applyDataMocks(fb, group.path, value, env);
      return this.path(fb, withMocks, path.slice(n), 0, env, k);
    }
    const prefix = groundPrefixId(ground);
    const inside = (id: string) => prefix === "" || id === prefix || id.startsWith(`${prefix}/`);
    const underPrefix = this.groupIds.filter(
      (id) => inside(id) && id !== prefix && !this.isShadowed(id, env.ctx),
    );
    const packagesInside = this.policy.packages.filter((p) => inside(groupId(p)));
    if (underPrefix.length === 0 && packagesInside.length === 0) {
      return this.path(fb, env.data, path, 0, env, k);
    }
    if (ground.length < path.length) {
      return this.dynamicDataRef(fb, path, ground, [...underPrefix, ...packagesInside.map(groupId)], env, k);
    }
    const below = underPrefix.filter((id) => this.policy.groups.get(id)!.kind !== "function");
    // Packages, and the ref prefixes of every rule (defined or not, function or not), are
    // documents: empty objects unless something fills them.
    const skeleton = new Set<string>();
    const addPrefixes = (rel: readonly string[]) => {
      for (let n = 1; n <= rel.length; n++) skeleton.add(rel.slice(0, n).join("/"));
    };
    for (const id of underPrefix) addPrefixes(this.policy.groups.get(id)!.path.slice(ground.length, -1));
    for (const p of packagesInside) addPrefixes(p.slice(ground.length));
    const skeletonPaths = [...skeleton].sort(
      (a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b),
    );
    // Assemble the virtual document at `ground`.
    const base = fb.local();
    fb.emit({ op: "reset", target: base });
    fb.block(() => {
      let cur: Local = env.data;
      for (const part of ground) {
        const next = fb.local();
        fb.emit({ op: "dot", source: cur, key: { kind: "string", value: part }, target: next });
        cur = next;
      }
      fb.emit({ op: "assign", source: { kind: "local", local: cur }, target: base });
    });
    const virtual = fb.local();
    fb.emit({ op: "makeobject", target: virtual });
    for (const rel of skeletonPaths) {
      const empty = fb.local();
      fb.emit({ op: "makeobject", target: empty });
      fb.emit({
        op: "objectinsertpath",
        object: virtual,
        path: rel.split("/").map((s): Operand => ({ kind: "string", value: s })),
        value: { kind: "local", local: empty },
        error: undefined,
      });
    }
    for (const id of below) {
      const group = this.policy.groups.get(id)!;
      // Groups below another group's path are part of that group's value.
      if (
        below.some(
          (other) =>
            other !== id && id.startsWith(`${other}/`) && this.policy.groups.get(other)!.kind === "object",
        )
      )
        continue;
      const value = fb.local();
      fb.block(() => {
        this.callGroup(fb, group, env, value);
        fb.emit({
          op: "objectinsertpath",
          object: virtual,
          path: group.path.slice(ground.length).map((s): Operand => ({ kind: "string", value: s })),
          value: { kind: "local", local: value },
          error: undefined,
        });
      });
    }
    const merged = fb.local();
    fb.emit({ op: "assign", source: { kind: "local", local: virtual }, target: merged });
    fb.block(() => {
      fb.emit({ op: "isobject", source: base });
      fb.emit({ op: "objectmerge", a: base, b: virtual, target: merged });
    });
    this.path(fb, merged, path.slice(ground.length), 0, env, k);
  }

  /**
   * `data.a[key]…` where the key is chosen at run time and rules live below `data.a`: as OPA's
   * planner does, each child of the rule tree is tried with its own key (so only the document
   * the key selects is evaluated, and a rule may read `data[input.ns]` without evaluating
   * itself), and base documents under the other keys are scanned.
   */
  private dynamicDataRef(
    fb: FunctionBuilder,
    path: readonly KTerm[],
    ground: readonly string[],
    below: readonly string[],
    env: Env,
    k: TermCont,
  ): void {
    const next = path[ground.length]!;
    const childKeys = [
      ...new Set(below.map((id) => id.split("/")[ground.length]).filter((c) => c !== undefined)),
    ].sort();
    for (const child of childKeys) {
      fb.block(() => {
        const key = fb.local();
        fb.emit({ op: "assign", source: { kind: "string", value: child }, target: key });
        this.unifyLocal(fb, next, key, env, (env2) =>
          this.dataRef(
            fb,
            [
              ...path.slice(0, ground.length),
              { type: "string", value: child, loc: next.loc },
              ...path.slice(ground.length + 1),
            ],
            env2,
            k,
          ),
        );
      });
    }
    fb.block(() => {
      let base: Local = env.data;
      for (const part of ground) {
        const step = fb.local();
        fb.emit({ op: "dot", source: base, key: { kind: "string", value: part }, target: step });
        base = step;
      }
      const key = fb.local();
      const value = fb.local();
      fb.emit({
        op: "scan",
        source: base,
        key,
        value,
        body: fb.nested(() => {
          for (const child of childKeys)
            fb.emit({
              op: "notequal",
              a: { kind: "local", local: key },
              b: { kind: "string", value: child },
            });
          this.unifyLocal(fb, next, key, env, (env2) =>
            this.path(fb, value, path, ground.length + 1, env2, k),
          );
        }),
      });
    });
  }

  /** Inside `with data.p.q as …` where `p` is a rule: the mocked value replaces part of p's value. */
  private applyDataMocks(fb: FunctionBuilder, groupPath: readonly string[], value: Local, env: Env): Local {
    let current = value;
    for (const mocked of env.ctx.dataPaths) {
      if (
        mocked.length <= groupPath.length ||
        groupId(mocked.slice(0, groupPath.length)) !== groupId(groupPath)
      )
        continue;
      let cur: Local = env.data;
      const mockValue = fb.local();
      for (const part of mocked) {
        const next = fb.local();
        fb.emit({ op: "dot", source: cur, key: { kind: "string", value: part }, target: next });
        cur = next;
      }
      fb.emit({ op: "assign", source: { kind: "local", local: cur }, target: mockValue });
      const next = fb.local();
      fb.emit({
        op: "upsert",
        source: current,
        path: mocked.slice(groupPath.length).map((s): Operand => ({ kind: "string", value: s })),
        value: { kind: "local", local: mockValue },
        target: next,
      });
      current = next;
    }
    return current;
  }
}

function groundPrefixId(ground: readonly string[]): string {
  return ground.join("/");
}

function replacementId(r: Replacement): string {
  switch (r.kind) {
    case "value":
      return JSON.stringify(stripLoc(r.term));
    case "builtin":
      return r.name;
    case "function":
      return r.path.join("/");
    case "carried":
      return `carried:${r.key}`;
  }
}

/** True when a term reads local vars (not just `input`, `data` and constants). */
function readsLocals(t: KTerm): boolean {
  switch (t.type) {
    case "var":
      return t.name !== "input" && t.name !== "data";
    case "ref":
      return readsLocals(t.head) || t.path.some(readsLocals);
    case "array":
    case "set":
      return t.items.some(readsLocals);
    case "object":
      return t.entries.some(([k, v]) => readsLocals(k) || readsLocals(v));
    case "arraycompr":
    case "setcompr":
    case "objectcompr":
      return true;
    default:
      return false;
  }
}

/** A mock context with an id that is the same whenever the replacements are. */
function mockContext(
  shadowed: ReadonlySet<string>,
  dataPaths: ReadonlyArray<readonly string[]>,
  callees: ReadonlyMap<string, Replacement>,
): MockContext {
  const parts = [
    ...[...shadowed].sort().map((id) => `shadow:${id}`),
    ...[...new Set(dataPaths.map((p) => groupId(p)))].sort().map((p) => `data:${p}`),
    ...[...callees].sort(([a], [b]) => a.localeCompare(b)).map(([key, r]) => `${key}=${replacementId(r)}`),
  ];
  if (parts.length === 0) return ROOT_CONTEXT;
  return { id: parts.join(";"), shadowed, dataPaths, callees };
}

function withCallees(ctx: MockContext, callees: ReadonlyMap<string, Replacement>): MockContext {
  return mockContext(ctx.shadowed, ctx.dataPaths, callees);
}

function stripLoc(t: KTerm): unknown {
  return JSON.parse(JSON.stringify(t, (k, v) => (k === "loc" ? undefined : v)));
}

export function plan(
  policy: CompiledPolicy,
  entrypoints: readonly PlanEntrypoint[],
  options: PlanOptions = {},
): { plan: IRPlan; errors: RegoError[]; sites: TraceSite[] } {
  const planner = new Planner(policy, options);
  const result = planner.plan(entrypoints);
  return { plan: result, errors: planner.errors, sites: planner.sites };
}

/**
 * The variables of an expression that the source named (not the compiler's temporaries), with
 * the locals they are bound to after it held, under their source names.
 */
function bindingsOf(e: KExpr, env: Env): Array<[string, Local]> {
  const names = new Set<string>();
  collectVars(e, names);
  const out: Array<[string, Local]> = [];
  for (const name of names) {
    const local = env.vars.get(name);
    if (local === undefined || name.startsWith("$")) continue;
    out.push([name.replace(/\$\d+$/, ""), local]);
  }
  return out;
}

/** Calls `visit` with each body nested in an expression (`not`, `every`, `with`, comprehensions). */
function forEachNestedBody(node: unknown, visit: (body: KBody) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) forEachNestedBody(item, visit);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === "loc") continue;
    if (key === "body" && Array.isArray(value)) visit(value);
    else forEachNestedBody(value, visit);
  }
}

/** Names of the vars in a kernel expression or term, nested bodies included. */
function collectVars(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectVars(item, into);
    return;
  }
  if (typeof node !== "object" || node === null) return;
  if (Reflect.get(node, "type") === "var") {
    const name: unknown = Reflect.get(node, "name");
    if (typeof name === "string") into.add(name);
    return;
  }
  for (const [key, value] of Object.entries(node)) if (key !== "loc") collectVars(value, into);
}

/**
 * A term whose planning neither iterates nor binds: scalars, bound variables (not `data`, a
 * document that may be computed) and collection literals of such terms.
 */
function isSimpleTerm(t: KTerm): boolean {
  switch (t.type) {
    case "null":
    case "boolean":
    case "number":
    case "string":
      return true;
    case "var":
      return t.name !== "data";
    case "array":
    case "set":
      return t.items.every(isSimpleTerm);
    case "object":
      return t.entries.every(([key, value]) => isSimpleTerm(key) && isSimpleTerm(value));
    default:
      return false;
  }
}
