/**
 * Recursion check: a rule may not depend on itself, directly or through other rules or
 * functions. Reported like OPA: `rule data.x.p is recursive: data.x.p -> data.x.q -> data.x.p`.
 */
import { RegoError } from "../errors.ts";
import type { KBody, KExpr, KRule, KTerm, RuleGroup } from "./kernel.ts";

/**
 * A data reference's ground prefix, and whether a key chosen at run time follows it
 * (`data[input.ns].items` has prefix [] and is dynamic).
 */
interface DataRef {
  prefix: string[];
  dynamic: boolean;
}

function dataRef(t: KTerm): DataRef | undefined {
  if (t.type === "var" && t.name === "data") return { prefix: [], dynamic: false };
  if (t.type !== "ref" || t.head.type !== "var" || t.head.name !== "data") return undefined;
  const prefix: string[] = [];
  for (const p of t.path) {
    if (p.type !== "string") return { prefix, dynamic: true };
    prefix.push(p.value);
  }
  return { prefix, dynamic: false };
}

function collectTerm(t: KTerm, refs: DataRef[]): void {
  const ref = dataRef(t);
  if (ref) refs.push(ref);
  const prefix = ref?.prefix;
  switch (t.type) {
    case "ref":
      if (!prefix) collectTerm(t.head, refs);
      for (const p of t.path) collectTerm(p, refs);
      break;
    case "array":
    case "set":
      for (const i of t.items) collectTerm(i, refs);
      break;
    case "object":
      for (const [k, v] of t.entries) {
        collectTerm(k, refs);
        collectTerm(v, refs);
      }
      break;
    case "arraycompr":
    case "setcompr":
      collectTerm(t.term, refs);
      collectBody(t.body, refs);
      break;
    case "objectcompr":
      collectTerm(t.key, refs);
      collectTerm(t.value, refs);
      collectBody(t.body, refs);
      break;
    default:
      break;
  }
}

function collectExpr(e: KExpr, refs: DataRef[]): void {
  switch (e.kind) {
    case "unify":
      collectTerm(e.left, refs);
      collectTerm(e.right, refs);
      break;
    case "call":
      if (e.callee.kind === "function") refs.push({ prefix: e.callee.path, dynamic: false });
      for (const a of e.args) collectTerm(a, refs);
      if (e.output) collectTerm(e.output, refs);
      break;
    case "term":
      collectTerm(e.term, refs);
      break;
    case "not":
      collectBody(e.body, refs);
      break;
    case "every":
      collectTerm(e.domain, refs);
      collectTerm(e.value, refs);
      collectBody(e.body, refs);
      break;
    case "with":
      for (const m of e.mods) collectTerm(m.value, refs);
      collectBody(e.body, refs);
      break;
  }
}

function collectBody(body: KBody, refs: DataRef[]): void {
  for (const e of body) collectExpr(e, refs);
}

function rulesOf(group: RuleGroup): KRule[] {
  const rules: KRule[] = [];
  for (const r of group.rules) rules.push(r, ...r.chain);
  if (group.defaultRule) rules.push(group.defaultRule);
  return rules;
}

/**
 * Ids of the groups a data reference reaches: the group at or above its prefix, and, when the
 * reference is ground, every group below it. As in OPA (`GetRules`), a key chosen at run time
 * stops the walk: `data[input.ns].items` depends on no rule in particular, so a rule may read
 * data that way without being called recursive.
 */
function groupsReached(ref: DataRef, ids: readonly string[]): string[] {
  const reached: string[] = [];
  const joined = ref.prefix.join("/");
  for (const id of ids) {
    if (joined === id || joined.startsWith(`${id}/`)) reached.push(id);
    else if (!ref.dynamic && id.startsWith(joined === "" ? "" : `${joined}/`)) reached.push(id);
  }
  return reached;
}

export function checkRecursion(groups: ReadonlyMap<string, RuleGroup>): RegoError[] {
  const ids = [...groups.keys()];
  const edges = new Map<string, string[]>();
  for (const [id, group] of groups) {
    const refs: DataRef[] = [];
    for (const rule of rulesOf(group)) {
      collectBody(rule.body, refs);
      for (const t of [...rule.keyPath, rule.value, ...(rule.key ? [rule.key] : [])]) collectTerm(t, refs);
    }
    const targets = new Set<string>();
    for (const ref of refs) for (const target of groupsReached(ref, ids)) targets.add(target);
    edges.set(id, [...targets].sort());
  }

  const errors: RegoError[] = [];
  const reported = new Set<string>();
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (id: string): void => {
    state.set(id, "visiting");
    stack.push(id);
    for (const next of edges.get(id) ?? []) {
      const s = state.get(next);
      if (s === "visiting") {
        const cycle = [...stack.slice(stack.indexOf(next)), next];
        if (!reported.has(next)) {
          reported.add(next);
          const group = groups.get(next)!;
          const loc = (group.rules[0] ?? group.defaultRule)?.loc;
          const names = cycle.map((c) => `data.${groups.get(c)!.path.join(".")}`);
          errors.push(
            new RegoError(
              "rego_recursion_error",
              `rule ${names[0]} is recursive: ${names.join(" -> ")}`,
              loc,
            ),
          );
        }
      } else if (s === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(id, "done");
  };
  for (const id of ids.sort()) if (!state.has(id)) visit(id);
  return errors;
}
