/**
 * Annotations across modules (OPA's `AnnotationSet`) and the values `rego.metadata.rule()` and
 * `rego.metadata.chain()` take in a rule. OPA computes both at compile time; so does Writ: the
 * lowerer replaces the calls by these constants.
 *
 * - `rego.metadata.rule()`: the `rule`-scope annotation closest above the rule, or `{}`.
 * - `rego.metadata.chain()`: `{path, annotations}` entries from the rule outwards: its `rule`-scope
 *   blocks (closest first, or one entry without annotations), the `document` scope of its path,
 *   its package's `package` scope, then `subpackages` scopes from its package up to the root.
 *   Paths leave out the leading `data`.
 */
import { type Location, RegoError } from "../errors.ts";
import type * as ast from "../syntax/ast.ts";
import { groundPrefix } from "./head.ts";

type JSONValue = ast.JSONValue;

/** An annotation as OPA's `Annotations.toObject` renders it. */
export function annotationObject(a: ast.Annotation): { [key: string]: JSONValue } {
  const out: { [key: string]: JSONValue } = {};
  if (a.scope !== "") out.scope = a.scope;
  if (a.title) out.title = a.title;
  if (a.entrypoint) out.entrypoint = true;
  if (a.description) out.description = a.description;
  if (a.organizations) out.organizations = a.organizations;
  if (a.related_resources) out.related_resources = a.related_resources.map((r) => ({ ...r }));
  if (a.authors) out.authors = a.authors.map((x) => ({ ...x }));
  if (a.schemas) {
    out.schemas = a.schemas.map((s) => {
      const entry: { [key: string]: JSONValue } = { path: s.path };
      if (s.schema) entry.schema = s.schema;
      if (s.definition !== undefined) entry.definition = s.definition;
      return entry;
    });
  }
  if (a.custom) out.custom = a.custom;
  return out;
}

function locText(loc: Location): string {
  return `${loc.file}:${loc.line}`;
}

function compareLoc(a: Location, b: Location): number {
  return a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col;
}

export class AnnotationIndex {
  readonly errors: RegoError[] = [];
  private readonly byRule = new Map<ast.Rule, ast.Annotation[]>();
  private readonly byPackage = new Map<string, ast.Annotation>();
  private readonly documents = new Map<string, ast.Annotation>();
  private readonly subpackages = new Map<string, ast.Annotation>();

  constructor(modules: readonly ast.Module[]) {
    for (const module of modules) {
      const pkg = module.package.path;
      for (const a of module.annotations ?? []) this.add(a, pkg);
    }
  }

  private add(a: ast.Annotation, pkg: string[]): void {
    const target = a.target;
    const redeclared = (existing: ast.Annotation) =>
      this.errors.push(
        new RegoError(
          "rego_compile_error",
          `${a.scope} annotation redeclared: ${locText(existing.loc)}`,
          a.loc,
        ),
      );
    if (a.scope === "rule" && target?.kind === "rule") {
      const list = this.byRule.get(target.rule) ?? [];
      list.push(a);
      this.byRule.set(target.rule, list);
    } else if (a.scope === "package" && target?.kind === "package") {
      const key = pkg.join("/");
      const existing = this.byPackage.get(key);
      if (existing) redeclared(existing);
      else this.byPackage.set(key, a);
    } else if (a.scope === "document" && target?.kind === "rule") {
      const key = [...pkg, ...groundPrefix(target.rule.head.ref)].join("/");
      const existing = this.documents.get(key);
      if (existing) redeclared(existing);
      else this.documents.set(key, a);
    } else if (a.scope === "subpackages" && target?.kind === "package") {
      const key = pkg.join("/");
      const existing = this.subpackages.get(key) ?? this.documents.get(key);
      if (existing) redeclared(existing);
      else this.subpackages.set(key, a);
    }
  }

  /** The `rule`-scope annotations of `rule`, closest first. */
  private ruleScope(rule: ast.Rule): ast.Annotation[] {
    return [...(this.byRule.get(rule) ?? [])].sort((a, b) => -compareLoc(a.loc, b.loc));
  }

  /** The value of `rego.metadata.rule()` in `rule`. */
  ruleMetadata(rule: ast.Rule): JSONValue {
    const [closest] = this.ruleScope(rule);
    return closest ? annotationObject(closest) : {};
  }

  /** The value of `rego.metadata.chain()` in `rule` of the package `pkg`. */
  chain(rule: ast.Rule, pkg: string[]): JSONValue {
    const path = [...pkg, ...groundPrefix(rule.head.ref)];
    const entries: JSONValue[] = [];
    const entry = (p: string[], a: ast.Annotation) => ({ path: p, annotations: annotationObject(a) });
    const own = this.ruleScope(rule);
    if (own.length === 0) entries.push({ path });
    for (const a of own) entries.push(entry(path, a));
    const document = this.documents.get(path.join("/"));
    if (document) entries.push(entry(path, document));
    const pkgAnnotation = this.byPackage.get(pkg.join("/"));
    if (pkgAnnotation) entries.push(entry(pkg, pkgAnnotation));
    for (let n = pkg.length; n >= 1; n--) {
      const prefix = pkg.slice(0, n);
      // A document-scope annotation at a package prefix counts too (OPA keeps both in one tree).
      const a = this.subpackages.get(prefix.join("/")) ?? this.documents.get(prefix.join("/"));
      if (a) entries.push(entry(prefix, a));
    }
    return entries;
  }
}
