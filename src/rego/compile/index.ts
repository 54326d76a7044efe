/**
 * The compile stage: parsed modules (and queries) to the kernel language, with OPA's checks:
 * names resolved, locals renamed, bodies ordered for safety (`rego_unsafe_var_error`), rules
 * grouped into documents with conflicting kinds reported (`rego_type_error`), recursion
 * rejected (`rego_recursion_error`), builtin arity checked.
 */
import { type Location, RegoError } from "../errors.ts";
import type * as ast from "../syntax/ast.ts";
import { DynamicsRewriter } from "./dynamics.ts";
import { groundPrefix } from "./head.ts";
import type { CompiledPolicy, KBody, KQuery, KRule, KTerm, RuleGroup, RuleKind } from "./kernel.ts";
import { isGenerated, Lowerer, type ModuleEnv, NameSource, opPath, sourceName } from "./lower.ts";
import { AnnotationIndex } from "./metadata.ts";
import { checkRecursion } from "./recursion.ts";
import { SafetyChecker, varsOfBody, varsOfTerm } from "./safety.ts";
import type { CompileChecks } from "./usage.ts";

export type * from "./kernel.ts";
export { sourceName } from "./lower.ts";
export type { CompileChecks } from "./usage.ts";

export interface QuerySource {
  name: string;
  body: ast.Body;
}

export interface CompileResult {
  policy: CompiledPolicy | undefined;
  errors: RegoError[];
}

export interface CompileOptions {
  /**
   * The checks `opa check` makes besides compiling (`usage.ts`): OPA's for every v1 module, or
   * strict mode's as well (then for v0 modules too). None by default: a policy that runs is not
   * refused for them.
   */
  checks?: CompileChecks;
}

export function compile(
  modules: readonly ast.Module[],
  queries: readonly QuerySource[] = [],
  options: CompileOptions = {},
): CompileResult {
  const errors: RegoError[] = [];
  const names = new NameSource();
  const functions = collectFunctions(modules);
  // As OPA's `GetArity`: a function's arity is its arguments'; any other rule can be called
  // with none (`cfg()` is the value of `cfg`), since a rule head `cfg()` defines a rule.
  const functionArities = new Map<string, number>();
  for (const m of modules) {
    for (const r of m.rules) {
      const path = [...m.package.path, ...groundPrefix(r.head.ref)].join("/");
      if (!functionArities.has(path) || isFunction(r)) functionArities.set(path, r.head.args?.length ?? 0);
    }
  }

  const rules: KRule[] = [];
  const packageRules = collectPackageRules(modules);
  const annotations = new AnnotationIndex(modules);
  errors.push(...annotations.errors);
  for (const module of modules) {
    const env = moduleEnv(module, packageRules, functions, errors);
    const lowerer = new Lowerer(env, names);
    lowerer.functionArity = (path) => functionArities.get(path.join("/"));
    // OPA makes the v1 checks of every Rego v1 module; of a v0 module only in strict mode.
    const checks = module.regoVersion === 0 && options.checks !== "strict" ? undefined : options.checks;
    for (const rule of module.rules) {
      lowerer.metadata = {
        rule: () => annotations.ruleMetadata(rule),
        chain: () => annotations.chain(rule, module.package.path),
      };
      const lowered = lowerRule(rule, env, lowerer);
      if (lowered) rules.push(lowered);
      if (checks) errors.push(...lowerer.usage.ruleErrors(checks, rule.head.loc));
    }
    errors.push(...lowerer.errors);
    if (checks) errors.push(...lowerer.usage.moduleErrors(module, checks));
  }

  const groups = groupRules(rules, errors);
  const safety = new SafetyChecker();
  const dynamics = new DynamicsRewriter(names, { equalIsUnification: true });
  for (const group of groups.values()) {
    for (const rule of allRules(group)) {
      orderRule(rule, safety);
      dynamics.rule(rule);
    }
  }

  const kqueries: KQuery[] = [];
  for (const q of queries) {
    const env: ModuleEnv = {
      file: q.name,
      packagePath: [],
      ruleNames: new Set(),
      imports: new Map(),
      functions,
      improvedNegation: false,
    };
    const lowerer = new Lowerer(env, names);
    lowerer.functionArity = (path) => functionArities.get(path.join("/"));
    const body = lowerer.body(q.body);
    errors.push(...lowerer.errors);
    const ordered = safety.reorder(body, new Set(), new Set());
    if (!ordered) continue;
    const outputs = [...varsOfBody(ordered.body, new Set(), false)]
      .filter((v) => !isGenerated(v))
      .map((v) => ({ name: sourceName(v), var: v }));
    const rewritten = new DynamicsRewriter(names, { equalIsUnification: false }).body(ordered.body);
    kqueries.push({ name: q.name, body: rewritten, outputs });
  }
  // As OPA's compiler halts after its undefined-function check, a call that could not be lowered
  // is reported alone, not again as the unsafe vars it leaves unbound.
  if (names.failed.size === 0) errors.push(...safety.errors);
  errors.push(...checkRecursion(groups));

  errors.sort(compareErrors);
  if (errors.length > 0) return { policy: undefined, errors };
  const packages = [...new Map(modules.map((m) => [m.package.path.join("/"), m.package.path])).values()];
  return { policy: { groups, queries: kqueries, packages }, errors };
}

function compareErrors(a: RegoError, b: RegoError): number {
  const la = a.location;
  const lb = b.location;
  if (!la || !lb) return 0;
  return la.file.localeCompare(lb.file) || la.line - lb.line || la.col - lb.col;
}

function* allRules(group: RuleGroup): Generator<KRule> {
  for (const r of group.rules) {
    yield r;
    yield* r.chain;
  }
  if (group.defaultRule) yield group.defaultRule;
}

// ---------------------------------------------------------------------------------- modules

/**
 * A rule with arguments. A head with none (`cfg() := {…}`) defines an ordinary rule, as in
 * OPA: `cfg.a` reads its value, `cfg()` calls it, and it belongs to its package's document.
 */
function isFunction(rule: ast.Rule): boolean {
  return (rule.head.args?.length ?? 0) > 0;
}

function collectFunctions(modules: readonly ast.Module[]): Set<string> {
  const functions = new Set<string>();
  for (const m of modules) {
    for (const r of m.rules) {
      if (isFunction(r)) functions.add([...m.package.path, ...groundPrefix(r.head.ref)].join("/"));
    }
  }
  return functions;
}

/**
 * The first name of every rule head, per package: a package is one namespace over all its files,
 * so a rule or function of one file is named bare in another (as in OPA).
 */
function collectPackageRules(modules: readonly ast.Module[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const m of modules) {
    const key = m.package.path.join("/");
    const names = out.get(key) ?? new Set<string>();
    out.set(key, names);
    for (const r of m.rules) {
      const [first] = groundPrefix(r.head.ref);
      if (first) names.add(first);
    }
  }
  return out;
}

/** The imports that turn OPA's improved negation on (as they enable `not { … }` in the parser). */
const IMPROVED_NEGATION = new Set(["future.keywords", "future.keywords.not", "rego.v2"]);

function moduleEnv(
  module: ast.Module,
  packageRules: ReadonlyMap<string, ReadonlySet<string>>,
  functions: ReadonlySet<string>,
  errors: RegoError[],
): ModuleEnv {
  // Imports are per file and, as in OPA, win over a rule of the same name.
  const ruleNames = new Set(packageRules.get(module.package.path.join("/")));
  const imports = new Map<string, string[]>();
  for (const imp of module.imports) {
    const path = opPath(imp.path);
    if (!path) {
      errors.push(new RegoError("rego_compile_error", "invalid import path", imp.loc));
      continue;
    }
    const [root] = path;
    if (root === "future" || root === "rego") continue;
    if (root !== "data" && root !== "input") {
      errors.push(
        new RegoError("rego_compile_error", `invalid import path: must begin with input or data`, imp.loc),
      );
      continue;
    }
    const alias = imp.alias ?? path[path.length - 1]!;
    if (path.length === 1 && imp.alias === undefined) continue;
    // An import wins over a rule of the same name in its own module too (OPA's `getGlobals`
    // puts imports over rules); other modules of the package still see the rule.
    ruleNames.delete(alias);
    imports.set(alias, path);
  }
  return {
    file: module.file,
    packagePath: module.package.path,
    ruleNames,
    imports,
    functions,
    improvedNegation: module.imports.some((imp) => IMPROVED_NEGATION.has(opPath(imp.path)?.join(".") ?? "")),
  };
}

// ---------------------------------------------------------------------------------- rules

const TRUE = (loc: Location): KTerm => ({ type: "boolean", value: true, loc });

function lowerRule(rule: ast.Rule, env: ModuleEnv, lowerer: Lowerer): KRule | undefined {
  lowerer.reset();
  const head = rule.head;
  const prefix = groundPrefix(head.ref);
  if (prefix.length === 0) {
    lowerer.errors.push(new RegoError("rego_parse_error", "invalid rule head", head.loc));
    return undefined;
  }
  const path = [...env.packagePath, ...prefix];
  const restOfRef = head.ref.type === "ref" ? head.ref.path.slice(prefix.length - 1) : [];

  // `p[q].r contains s` is an object rule whose leaves are sets.
  let kind: RuleKind;
  if (isFunction(rule)) kind = "function";
  else if (restOfRef.length > 0) kind = "object";
  else if (head.key) kind = "multivalue";
  else kind = "complete";

  const argsPrelude: KBody = [];
  const args: KTerm[] = [];
  if (isFunction(rule)) {
    // A var named twice (`same(x, x)`) is one var: the second argument must equal the first.
    for (const a of head.args ?? []) lowerer.declarePattern(a, "argument");
    for (const a of head.args ?? []) args.push(lowerer.term(a, argsPrelude));
  }

  const lowerOne = (r: ast.Rule, isDefault: boolean): KRule => {
    lowerer.pushScope();
    const body = [...argsPrelude, ...lowerer.body(r.body)];
    // Head terms that iterate or look things up (`q := xs[_]`) are evaluated in the body.
    const headTerm = (t: ast.Term): KTerm => {
      const lowered = lowerer.term(t, body);
      if (!containsRef(lowered)) return lowered;
      const temp: KTerm = { type: "var", name: lowerer.names.temp(), loc: t.loc };
      body.push({ kind: "unify", left: temp, right: lowered, loc: t.loc });
      return temp;
    };
    const keyPath = restOfRef.map(headTerm);
    const key = r.head.key ? headTerm(r.head.key) : undefined;
    const value = r.head.value ? headTerm(r.head.value) : TRUE(r.head.loc);
    lowerer.popScope();
    return {
      kind,
      path,
      keyPath,
      key,
      value,
      args,
      body,
      default: isDefault,
      chain: [],
      loc: r.loc,
      file: env.file,
    };
  };

  const first = lowerOne(rule, rule.default);
  for (let e = rule.else; e; e = e.else) first.chain.push(lowerOne(e, false));
  return first;
}

function containsRef(t: KTerm): boolean {
  switch (t.type) {
    case "ref":
      return true;
    case "array":
    case "set":
      return t.items.some(containsRef);
    case "object":
      return t.entries.some(([k, v]) => containsRef(k) || containsRef(v));
    default:
      return false;
  }
}

/** Orders a rule's body for safety and checks that the head's vars are bound by it. */
function orderRule(rule: KRule, safety: SafetyChecker): void {
  const argVars = new Set<string>();
  for (const a of rule.args) varsOfTerm(a, argVars, false);
  const headTerms = [...rule.keyPath, ...(rule.key ? [rule.key] : []), rule.value];
  const visible = new Set(argVars);
  for (const t of headTerms) varsOfTerm(t, visible, false);
  const ordered = safety.reorder(rule.body, argVars, visible);
  if (!ordered) return;
  rule.body = ordered.body;
  const headCheck: KBody = headTerms.map((t) => ({ kind: "term", term: t, loc: t.loc }));
  for (const check of headCheck) {
    const vars = check.kind === "term" ? varsOfTerm(check.term, new Set(), false) : new Set<string>();
    if ([...vars].some((v) => !ordered.bound.has(v))) safety.reportUnsafe([check], ordered.bound, visible);
  }
  // Closures in head terms (`p := [x | …]`) get their bodies ordered too.
  const closureScope = ordered.bound;
  const order = (t: KTerm): KTerm => {
    const result = safety.reorder([{ kind: "term", term: t, loc: t.loc }], closureScope, visible, false);
    const first = result?.body[0];
    return first && first.kind === "term" ? first.term : t;
  };
  rule.keyPath = rule.keyPath.map(order);
  if (rule.key) rule.key = order(rule.key);
  rule.value = order(rule.value);
}

/** For a conflict between files of one package: where the other rule is. */
function alsoAt(first: Location | undefined, rule: Location): string {
  return first && first.file !== rule.file
    ? ` (conflicts with ${first.file}:${first.line}:${first.col})`
    : "";
}

function groupRules(rules: readonly KRule[], errors: RegoError[]): Map<string, RuleGroup> {
  const groups = new Map<string, RuleGroup>();
  const firstLoc = new Map<string, Location>();
  for (const rule of rules) {
    const id = rule.path.join("/");
    let group = groups.get(id);
    if (!firstLoc.has(id)) firstLoc.set(id, rule.loc);
    if (!group) {
      group = {
        path: rule.path,
        kind: rule.kind,
        rules: [],
        defaultRule: undefined,
        arity: rule.args.length,
      };
      groups.set(id, group);
    }
    if (group.kind !== rule.kind || group.arity !== rule.args.length) {
      errors.push(
        new RegoError(
          "rego_type_error",
          `conflicting rules data.${rule.path.join(".")} found${alsoAt(firstLoc.get(id), rule.loc)}`,
          rule.loc,
        ),
      );
      continue;
    }
    if (rule.default) {
      if (group.defaultRule) {
        errors.push(
          new RegoError(
            "rego_type_error",
            `multiple default rules data.${rule.path.join(".")} found${alsoAt(group.defaultRule.loc, rule.loc)}`,
            rule.loc,
          ),
        );
        continue;
      }
      group.defaultRule = rule;
    } else {
      group.rules.push(rule);
    }
  }
  // A complete document cannot also have rules below it.
  const ids = [...groups.keys()].sort();
  for (const id of ids) {
    const group = groups.get(id)!;
    if (group.kind === "object") continue;
    for (const other of ids) {
      if (other.startsWith(`${id}/`)) {
        const rule = groups.get(other)!.rules[0] ?? groups.get(other)!.defaultRule;
        errors.push(
          new RegoError(
            "rego_type_error",
            `rule data.${group.path.join(".")} conflicts with [data.${groups.get(other)!.path.join(".")}]`,
            rule?.loc ?? group.rules[0]?.loc,
          ),
        );
      }
    }
  }
  return groups;
}
