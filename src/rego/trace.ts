/**
 * Instrumented builds (issue 19): a policy built with `instrument: true` reports, while it is
 * evaluated, which rules produced values and which body expressions were evaluated and held,
 * with the values their variables were bound to. Policy explanations (`explain-tree.ts`) and test
 * coverage (`coverageReport`) are read from those events.
 *
 * The planner places a call of the host builtin `TRACE_BUILTIN` (a name no Rego source can
 * spell) at each point; the module imports it like any host builtin. `loadCompiledPolicy` loads
 * such a module only when given a trace sink, so an instrumented build never serves live
 * traffic: the gateway's policy engine passes none and refuses it.
 */

/** The builtin an instrumented module calls; `$` is not an identifier character in Rego. */
export const TRACE_BUILTIN = "$trace";

/** What a trace event reports. */
export const TraceKind = {
  /** An expression is about to be evaluated (coverage). */
  enter: 0,
  /** An expression held; its variables' bindings travel with the event. */
  held: 1,
  /** A rule's body held and the rule produced a value (or a default rule applied). */
  rule: 2,
} as const;
export type TraceKind = (typeof TraceKind)[keyof typeof TraceKind];

/** A rule of the source: where it is, the document it defines, the expressions of its body. */
export interface RuleSite {
  kind: "rule";
  file: string;
  line: number;
  col: number;
  /** The document's reference, `data.writ.decision`. */
  rule: string;
  default: boolean;
  /** The site ids of the body's own expressions, in body order (not those nested in them). */
  body: number[];
}

/** A body expression of a rule (at any depth: inside `not`, `every`, comprehensions too). */
export interface ExprSite {
  kind: "expr";
  file: string;
  line: number;
  col: number;
  /** The rule the expression belongs to (its site id). */
  rule: number;
}

export type TraceSite = RuleSite | ExprSite;

export interface TraceEvent {
  kind: TraceKind;
  site: number;
  /** For `held`: the expression's named variables and their values (JSON). */
  bindings?: Record<string, unknown>;
}

/** OPA's `opa test --coverage` report shape. */
export interface CoverageReport {
  files: Record<string, FileCoverage>;
  covered_lines: number;
  not_covered_lines: number;
  coverage: number;
}

export interface FileCoverage {
  covered?: LineRange[];
  not_covered?: LineRange[];
  covered_lines: number;
  not_covered_lines: number;
  coverage: number;
}

export interface LineRange {
  start: { row: number };
  end: { row: number };
}

/**
 * Line coverage of the sources by the events of any number of evaluations: a line holding an
 * expression is covered once the expression was evaluated, a rule's head line once the rule
 * produced a value. A line is covered when anything on it is.
 */
export function coverageReport(sites: readonly TraceSite[], events: Iterable<TraceEvent>): CoverageReport {
  const reached = new Set<number>();
  for (const event of events) {
    const site = sites[event.site];
    if (!site) continue;
    if (
      (site.kind === "expr" && event.kind === TraceKind.enter) ||
      (site.kind === "rule" && event.kind === TraceKind.rule)
    )
      reached.add(event.site);
  }
  const lines = new Map<string, Map<number, boolean>>();
  for (const [id, site] of sites.entries()) {
    const file = lines.get(site.file) ?? new Map<number, boolean>();
    lines.set(site.file, file);
    file.set(site.line, (file.get(site.line) ?? false) || reached.has(id));
  }
  const files: Record<string, FileCoverage> = {};
  let covered = 0;
  let notCovered = 0;
  for (const [file, rows] of [...lines.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sorted = [...rows.entries()].sort(([a], [b]) => a - b);
    const yes = sorted.filter(([, c]) => c).map(([row]) => row);
    const no = sorted.filter(([, c]) => !c).map(([row]) => row);
    covered += yes.length;
    notCovered += no.length;
    files[file] = {
      ...(yes.length > 0 ? { covered: ranges(yes) } : {}),
      ...(no.length > 0 ? { not_covered: ranges(no) } : {}),
      covered_lines: yes.length,
      not_covered_lines: no.length,
      coverage: percent(yes.length, yes.length + no.length),
    };
  }
  return {
    files,
    covered_lines: covered,
    not_covered_lines: notCovered,
    coverage: percent(covered, covered + notCovered),
  };
}

/** Rules no event showed producing a value, by file: what the text summary names as uncovered. */
export function uncoveredRules(sites: readonly TraceSite[], events: Iterable<TraceEvent>): RuleSite[] {
  const fired = new Set<number>();
  for (const event of events) if (event.kind === TraceKind.rule) fired.add(event.site);
  return sites
    .filter((s, id): s is RuleSite => s.kind === "rule" && !fired.has(id))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.col - b.col));
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 100 : Math.round((10000 * part) / whole) / 100;
}

/** Sorted rows as inclusive ranges of consecutive rows. */
function ranges(rows: readonly number[]): LineRange[] {
  const out: LineRange[] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (last && last.end.row === row - 1) last.end.row = row;
    else out.push({ start: { row }, end: { row } });
  }
  return out;
}
