/**
 * One evaluation's trace read as an answer (issue 31): the rule that produced the entrypoint's
 * value, the body expressions that made it hold with the values they saw, and under each the
 * rules those expressions read that explain it (the `contains` rules that added the reasons, the
 * conditions that held), as a tree; then the rules tried before it that did not hold (the earlier
 * `else` branches, the denials that were checked), each with the expression that failed; then,
 * folded, every other rule that produced a value. Each rule appears once, and each source
 * expression once: the compiler's hoisted temporaries share their expression's row.
 */
import { expressionValues, referencedRules, type ShownValue, type ValueScope } from "./explain-values.ts";
import type { Body, Expr, Module, Rule } from "./syntax/ast.ts";
import { type RuleSite, type TraceEvent, TraceKind, type TraceSite } from "./trace.ts";

export interface ExplainStep {
  file: string;
  line: number;
  /** The expression's first source line, trimmed. */
  text: string;
  /** False for the expression a rule that did not hold stopped at. */
  held: boolean;
  /** Its refs, calls, comprehensions and variables, with their values (bounded in size). */
  values: ShownValue[];
  /**
   * The rules it reads that explain it: for an expression that held, the `contains` rules and
   * conditions that produced what it read; for one that failed or is negated, or that read
   * something no rule produced (`count(denials) == 0`), those that were tried.
   */
  because: ExplainNode[];
}

export interface ExplainNode {
  /** The document the rule defines (`data.writ.denials`). */
  rule: string;
  file: string;
  line: number;
  /** The rule's head as written, on one line (shortened). */
  head: string;
  default: boolean;
  /** Whether the rule produced a value (else it was tried and did not). */
  held: boolean;
  steps: ExplainStep[];
}

export interface ExplainTree {
  /** `rule`: a rule of the entrypoint produced its value; `default`: its default rule did; `undefined`: none. */
  decided_by: "rule" | "default" | "undefined";
  answer: ExplainNode | undefined;
  /** One line per reason: the answer's rule, the rules under it, the expression that decided. */
  chains: string[];
  /** Rules of the entrypoint tried before the answer (or, for a default, all of them) that did not hold. */
  tried: ExplainNode[];
  /** Every other rule that produced a value, in the order it first did. */
  rest: ExplainNode[];
}

/** What the tree needs beside the trace: the parsed modules and how to read values. */
export interface TreeContext {
  sites: readonly TraceSite[];
  modules: readonly Module[];
  /** The source texts of the modules, by file (for heads and line texts). */
  sources: ReadonlyMap<string, string>;
  /** The entrypoint's rule path, `writ/decision`. */
  entrypoint: string;
  input: unknown;
  data: unknown;
  rules: ReadonlySet<string>;
  ruleValue(path: string): unknown;
}

const MAX_DEPTH = 8;

interface SiteState {
  entered: number;
  held: number;
  bindings: Record<string, unknown> | undefined;
}

interface Firing {
  /** The held bindings of the rule's body sites when it (first) produced a value. */
  bindings: Map<number, Record<string, unknown>>;
}

interface Located {
  module: Module;
  rule: Rule;
  site: RuleSite;
  /** The rule's top-level body expressions and, for each, the sites compiled from it. */
  exprs: Array<{ expr: Expr; sites: number[] }>;
}

export function explainTree(events: readonly TraceEvent[], ctx: TreeContext): ExplainTree {
  const reader = new TraceReader(events, ctx);
  return reader.tree();
}

class TraceReader {
  private readonly state = new Map<number, SiteState>();
  private readonly firings = new Map<number, Firing>();
  /** Rule sites in the order they first produced a value. */
  private readonly fired: number[] = [];
  private readonly located = new Map<number, Located | undefined>();
  private readonly shown = new Set<number>();
  private readonly ruleKinds: Map<string, "set" | "object" | "condition" | "value">;
  private readonly sources = new Map<string, string[]>();

  constructor(
    events: readonly TraceEvent[],
    private readonly ctx: TreeContext,
  ) {
    let seq = 0;
    for (const event of events) {
      seq++;
      const site = ctx.sites[event.site];
      if (!site) continue;
      const s = this.state.get(event.site) ?? { entered: 0, held: 0, bindings: undefined };
      this.state.set(event.site, s);
      if (event.kind === TraceKind.enter) s.entered = seq;
      else if (event.kind === TraceKind.held) {
        s.held = seq;
        s.bindings = event.bindings ?? {};
      } else if (site.kind === "rule" && !this.firings.has(event.site)) {
        const bindings = new Map<number, Record<string, unknown>>();
        for (const id of site.body) {
          const b = this.state.get(id);
          if (b?.bindings && b.held >= b.entered) bindings.set(id, b.bindings);
        }
        this.firings.set(event.site, { bindings });
        this.fired.push(event.site);
      }
    }
    this.ruleKinds = ruleKinds(ctx.modules);
  }

  tree(): ExplainTree {
    const path = `data.${this.ctx.entrypoint.split("/").join(".")}`;
    const own = this.ctx.sites.flatMap((s, id) => (s.kind === "rule" && s.rule === path ? [id] : []));
    const answerId = this.fired.filter((id) => own.includes(id)).at(-1);
    const answerSite = answerId === undefined ? undefined : this.ruleSite(answerId);
    // The answer first, so that the rules it reads are shown under it rather than as tried.
    if (answerId !== undefined) this.shown.add(answerId);
    const answer = answerId === undefined ? undefined : this.node(answerId, 0);
    const before = (id: number): boolean => {
      if (answerSite === undefined || answerSite.default) return true;
      const s = this.ruleSite(id);
      return (
        s !== undefined &&
        (s.line < answerSite.line || (s.line === answerSite.line && s.col < answerSite.col))
      );
    };
    const triedIds = own
      .filter((id) => id !== answerId && !this.firings.has(id) && this.entered(id) && before(id))
      .sort((a, b) => this.position(a) - this.position(b));
    for (const id of triedIds) this.shown.add(id);
    const tried = triedIds.map((id) => this.node(id, 0));
    const rest = this.fired
      .filter((id) => !this.shown.has(id) && this.located.get(id)?.rule.head.args === undefined)
      .map((id) => {
        this.shown.add(id);
        return this.node(id, MAX_DEPTH);
      });
    return {
      decided_by: answerSite === undefined ? "undefined" : answerSite.default ? "default" : "rule",
      answer,
      chains: answer ? chains(answer) : [],
      tried,
      rest,
    };
  }

  private ruleSite(id: number): RuleSite | undefined {
    const s = this.ctx.sites[id];
    return s?.kind === "rule" ? s : undefined;
  }

  private position(id: number): number {
    const s = this.ruleSite(id);
    return s ? s.line * 10_000 + s.col : 0;
  }

  private entered(id: number): boolean {
    const site = this.ruleSite(id);
    return site?.body.some((b) => (this.state.get(b)?.entered ?? 0) > 0) ?? false;
  }

  /** A rule as a node: its steps and, below `MAX_DEPTH`, the rules its steps read. */
  private node(id: number, depth: number): ExplainNode {
    const site = this.ruleSite(id)!;
    const located = this.locate(id);
    const firing = this.firings.get(id);
    const steps: ExplainStep[] = [];
    const bindings: Record<string, unknown> = {};
    for (const { expr, sites } of located?.exprs ?? []) {
      const entered = sites.filter((s) => (this.state.get(s)?.entered ?? 0) > 0);
      if (!firing && entered.length === 0) break;
      const held =
        firing !== undefined ||
        entered.every((s) => {
          const st = this.state.get(s)!;
          return st.held >= st.entered;
        });
      // The body's variables as bound so far: a failed expression's own event carries none.
      for (const s of sites)
        Object.assign(bindings, firing ? firing.bindings.get(s) : this.state.get(s)?.bindings);
      const module = located!.module;
      steps.push({
        file: site.file,
        line: expr.loc.line,
        text: this.line(site.file, expr.loc.line),
        held,
        values: expressionValues(expr, this.scope(module, { ...bindings })).map((v) => ({
          term: v.term,
          value: boundValue(v.value),
        })),
        because: depth < MAX_DEPTH ? this.because(expr, module, held && !expr.negated, depth) : [],
      });
      if (!held) break;
    }
    return {
      rule: site.rule,
      file: site.file,
      line: site.line,
      head: located ? this.head(located) : this.line(site.file, site.line),
      default: site.default,
      held: firing !== undefined,
      steps,
    };
  }

  /** The rules an expression reads that explain it, each not shown elsewhere yet. */
  private because(expr: Expr, module: Module, heldPlainly: boolean, depth: number): ExplainNode[] {
    const out: ExplainNode[] = [];
    for (const rule of referencedRules(expr, this.scope(module, {}))) {
      const kind = this.ruleKinds.get(rule);
      if (kind === undefined || kind === "value") continue;
      // What produced the value read; when nothing did (an empty set, `count(denials) == 0`),
      // or the expression failed or is negated, what was tried.
      const sites = this.sitesOf(rule);
      const fired = sites.filter((r) => this.firings.has(r));
      const ids =
        heldPlainly && fired.length > 0 ? fired : sites.filter((r) => this.firings.has(r) || this.entered(r));
      for (const r of ids) {
        if (this.shown.has(r)) continue;
        this.shown.add(r);
        out.push(this.node(r, depth + 1));
      }
    }
    return out;
  }

  private sitesOf(rule: string): number[] {
    const path = `data.${rule.split("/").join(".")}`;
    return this.ctx.sites
      .flatMap((s, id) => (s.kind === "rule" && s.rule === path && !s.default ? [id] : []))
      .sort((a, b) => this.position(a) - this.position(b));
  }

  private scope(module: Module, bindings: Record<string, unknown>): ValueScope {
    return {
      input: this.ctx.input,
      data: this.ctx.data,
      module,
      rules: this.ctx.rules,
      ruleValue: (p) => this.ctx.ruleValue(p),
      bindings,
    };
  }

  /** The parsed rule a rule site was compiled from, with its body's sites by source expression. */
  private locate(id: number): Located | undefined {
    if (this.located.has(id)) return this.located.get(id);
    const site = this.ruleSite(id);
    let found: Located | undefined;
    const module = site && this.ctx.modules.find((m) => m.file === site.file);
    if (site && module) {
      for (const top of module.rules) {
        for (let rule: Rule | undefined = top; rule; rule = rule.else) {
          if (rule.loc.line !== site.line || rule.loc.col !== site.col) continue;
          found = { module, rule, site, exprs: groupSites(rule.body, site.body, this.ctx.sites) };
        }
      }
    }
    this.located.set(id, found);
    return found;
  }

  private line(file: string, line: number): string {
    return this.lines(file)[line - 1]?.trim() ?? "";
  }

  private lines(file: string): string[] {
    let lines = this.sources.get(file);
    if (!lines) {
      lines = (this.ctx.sources.get(file) ?? "").split("\n");
      this.sources.set(file, lines);
    }
    return lines;
  }

  /** The head as written, from the rule's first token to its body, on one line. */
  private head({ rule, site }: Located): string {
    const text = this.lines(site.file).join("\n");
    const start = rule.loc.offset;
    const end = rule.body[0]?.loc.offset ?? text.indexOf("\n", start);
    const raw = text
      .slice(start, end < 0 ? undefined : end)
      .replace(/\s+/g, " ")
      .replace(/\s*(if\s*)?\{?\s*$/, "")
      .trim();
    return shorten(raw, 140);
  }
}

/**
 * Each of the body's sites belongs to the last top-level expression that starts at or before it;
 * sites before the first expression are the head's calls, lifted into the body by the compiler.
 */
function groupSites(
  body: Body,
  siteIds: readonly number[],
  sites: readonly TraceSite[],
): Array<{ expr: Expr; sites: number[] }> {
  const groups: Array<{ expr: Expr; sites: number[] }> = body.map((expr) => ({ expr, sites: [] }));
  for (const id of siteIds) {
    const s = sites[id];
    if (!s) continue;
    let owner: number | undefined;
    for (const [i, { expr }] of groups.entries()) {
      if (expr.loc.line < s.line || (expr.loc.line === s.line && expr.loc.col <= s.col)) owner = i;
    }
    if (owner !== undefined) groups[owner]!.sites.push(id);
  }
  return groups;
}

/**
 * The document a rule defines, as a data path (`writ/denials`): its package and the ground prefix
 * of its head; `partial` when the head goes on with a variable (`p[k] := v`).
 */
export function rulePath(module: Module, rule: Rule): { path: string; partial: boolean } {
  const ref = rule.head.ref;
  const ground: string[] = ref.type === "var" ? [ref.name] : [];
  let partial = false;
  if (ref.type === "ref" && ref.head.type === "var") {
    ground.push(ref.head.name);
    for (const p of ref.path) {
      if (p.type !== "string") {
        partial = true;
        break;
      }
      ground.push(p.value);
    }
  }
  return { path: [...module.package.path, ...ground].join("/"), partial };
}

/** How each rule path reads in a tree: sets and objects (reasons), conditions, plain values. */
function ruleKinds(modules: readonly Module[]): Map<string, "set" | "object" | "condition" | "value"> {
  const kinds = new Map<string, "set" | "object" | "condition" | "value">();
  for (const m of modules) {
    for (const r of m.rules) {
      if (r.head.args !== undefined) continue;
      const { path, partial } = rulePath(m, r);
      const kind =
        r.head.key !== undefined
          ? "set"
          : partial
            ? "object"
            : r.head.value === undefined && !r.default
              ? "condition"
              : "value";
      if (!kinds.has(path) || kinds.get(path) === "value") kinds.set(path, kind);
    }
  }
  return kinds;
}

/**
 * One line per leaf of the answer: the rules under the answer that held down to it (the answer's
 * own head only when nothing under it held), then the leaf's last expression, the one that decided.
 */
function chains(answer: ExplainNode): string[] {
  const out: string[] = [];
  const label = (n: ExplainNode) => `${shorten(n.head, 72)} (${n.file}:${n.line})`;
  const walk = (node: ExplainNode, trail: string[]): void => {
    const here = node === answer ? [] : [...trail, label(node)];
    const held = node.steps.flatMap((s) => s.because.filter((c) => c.held));
    if (held.length > 0) {
      for (const c of held) walk(c, here);
      return;
    }
    const last = node.steps.at(-1);
    out.push(
      [...(here.length > 0 ? here : [label(node)]), ...(last ? [`line ${last.line} ${last.text}`] : [])].join(
        " ← ",
      ),
    );
  };
  walk(answer, []);
  return out;
}

/** A value cut to a readable size: long strings, arrays and objects are shortened, and say so. */
export function boundValue(value: unknown, depth = 0): unknown {
  const ITEMS = 20;
  if (typeof value === "string") return shorten(value, 200);
  if (Array.isArray(value)) {
    if (depth >= 4) return `[… ${value.length} items]`;
    const items = value.slice(0, ITEMS).map((v) => boundValue(v, depth + 1));
    return value.length > ITEMS ? [...items, `… ${value.length - ITEMS} more`] : items;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    if (depth >= 4) return `{… ${entries.length} keys}`;
    const kept = Object.fromEntries(entries.slice(0, ITEMS).map(([k, v]) => [k, boundValue(v, depth + 1)]));
    return entries.length > ITEMS ? { ...kept, "…": `${entries.length - ITEMS} more keys` } : kept;
  }
  return value;
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
