/**
 * A parsed module as OPA's JSON encoding of `ast.Module` (what `rego.parse_module` returns):
 * terms are `{"type": …, "value": …}`, expressions `{"index", "terms", "negated"?, "with"?}`,
 * rules `{"head", "body", "default"?, "else"?, "annotations"?}`. Like OPA's parser, wildcards
 * become `$0`, `$1`, …, an implicit rule value is `true` and a missing body is `true`.
 */
import { annotationObject } from "../../compile/metadata.ts";
import {
  fromJSON,
  makeArray,
  makeBoolean,
  makeObject,
  makeString,
  NULL,
  numberFromText,
  type Value,
} from "../../plan/value.ts";
import type * as ast from "../../syntax/ast.ts";
import { isTemplateExpr } from "../../syntax/ast.ts";
import { printTerm } from "../../syntax/printer.ts";

function obj(entries: Array<[string, Value | undefined]>): Value {
  return makeObject(
    entries.filter((e): e is [string, Value] => e[1] !== undefined).map(([k, v]) => [makeString(k), v]),
  );
}

function term(type: string, value: Value): Value {
  return obj([
    ["type", makeString(type)],
    ["value", value],
  ]);
}

const TYPE_ORDER = ["null", "boolean", "number", "string", "var", "ref", "array", "object", "set"];

/** Sort key approximating OPA's term order: by kind, then by text. */
function termOrder(a: ast.Term, b: ast.Term): number {
  const ra = TYPE_ORDER.indexOf(a.type);
  const rb = TYPE_ORDER.indexOf(b.type);
  if (ra !== rb) return (ra < 0 ? 99 : ra) - (rb < 0 ? 99 : rb);
  if (a.type === "number" && b.type === "number") return Number(a.value) - Number(b.value);
  const ta = printTerm(a);
  const tb = printTerm(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

class Encoder {
  private wildcards = 0;

  module(m: ast.Module): Value {
    const annotations = m.annotations ?? [];
    return obj([
      ["package", obj([["path", makeArray([term("var", makeString("data")), ...m.package.path.map(str)])]])],
      ["imports", m.imports.length > 0 ? makeArray(m.imports.map((i) => this.import(i))) : undefined],
      [
        "annotations",
        annotations.length > 0 ? makeArray(annotations.map((a) => fromJSON(annotationObject(a)))) : undefined,
      ],
      ["rules", m.rules.length > 0 ? makeArray(m.rules.map((r) => this.rule(r, m))) : undefined],
      ["comments", m.comments.length > 0 ? makeArray(m.comments.map(comment)) : undefined],
    ]);
  }

  private import(i: ast.Import): Value {
    const path = i.path.type === "var" ? term("ref", makeArray([this.term(i.path)])) : this.term(i.path);
    return obj([
      ["path", path],
      ["alias", i.alias === undefined ? undefined : makeString(i.alias)],
    ]);
  }

  private rule(r: ast.Rule, m: ast.Module): Value {
    const own = (m.annotations ?? []).filter(
      (a) =>
        a.target?.kind === "rule" &&
        (a.target.rule === r ||
          (a.scope === "document" && printTerm(a.target.rule.head.ref) === printTerm(r.head.ref))),
    );
    return obj([
      ["default", r.default ? makeBoolean(true) : undefined],
      ["else", r.else ? this.rule(r.else, m) : undefined],
      ["head", this.head(r.head, r.default)],
      ["body", this.body(r.body.length > 0 ? r.body : [trueExpr(r.loc)])],
      ["annotations", own.length > 0 ? makeArray(own.map((a) => fromJSON(annotationObject(a)))) : undefined],
    ]);
  }

  private head(h: ast.RuleHead, isDefault: boolean): Value {
    const ref = h.ref.type === "var" ? [h.ref] : [h.ref.head, ...h.ref.path];
    let value = h.value;
    // `p if …`, `f(x) if …`, `a.b if …` stand for `true`; `p[x] if …` (a variable key) does not.
    const variableKey = ref.length === 2 && ref[1]!.type !== "string";
    if (value === undefined && h.key === undefined && (isDefault || !variableKey || h.args !== undefined)) {
      value = { type: "boolean", value: true, loc: h.loc };
    }
    return obj([
      ["name", h.ref.type === "var" ? makeString(h.ref.name) : undefined],
      ["ref", makeArray(ref.map((t) => this.term(t)))],
      ["args", h.args && h.args.length > 0 ? makeArray(h.args.map((t) => this.term(t))) : undefined],
      ["key", h.key ? this.term(h.key) : undefined],
      ["value", value ? this.term(value) : undefined],
      ["assign", h.assign ? makeBoolean(true) : undefined],
    ]);
  }

  body(body: ast.Body): Value {
    return makeArray(body.map((e, index) => this.expr(e, index)));
  }

  private expr(e: ast.Expr, index: number): Value {
    const node = e.node;
    let terms: Value;
    switch (node.type) {
      case "some":
        terms = obj([["symbols", makeArray(node.symbols.map((s) => this.term(s)))]]);
        break;
      case "every":
        terms = obj([
          ["key", node.key ? this.term(node.key) : NULL],
          ["value", this.term(node.value)],
          ["domain", this.term(node.domain)],
          ["body", this.body(node.body)],
        ]);
        break;
      case "body":
        terms = obj([["body", this.body(node.body)]]);
        break;
      case "logical":
        terms = obj([
          ["type", makeString(node.op)],
          ["lhs", this.body(node.lhs)],
          ["rhs", this.body(node.rhs)],
        ]);
        break;
      case "call":
        terms = makeArray([this.operator(node.op), ...node.args.map((a) => this.term(a))]);
        break;
      default:
        terms = this.term(node);
    }
    return obj([
      ["index", numberFromText(String(index))],
      ["negated", e.negated ? makeBoolean(true) : undefined],
      ["terms", terms],
      [
        "with",
        e.with.length > 0
          ? makeArray(
              e.with.map((w) =>
                obj([
                  ["target", this.refTerm(w.target)],
                  ["value", this.term(w.value)],
                ]),
              ),
            )
          : undefined,
      ],
    ]);
  }

  /** Operators and function names are refs in OPA (`eq` is `[var eq]`). */
  private operator(op: ast.VarTerm | ast.RefTerm): Value {
    return this.refTerm(op);
  }

  private refTerm(t: ast.VarTerm | ast.RefTerm): Value {
    return t.type === "var" ? term("ref", makeArray([term("var", makeString(t.name))])) : this.term(t);
  }

  term(t: ast.Term): Value {
    switch (t.type) {
      case "null":
        return term("null", NULL);
      case "boolean":
        return term("boolean", makeBoolean(t.value));
      case "number":
        return term("number", numberFromText(t.value));
      case "string":
        return str(t.value);
      case "var":
        if (t.name === "_") return term("var", makeString(`$${this.wildcards++}`));
        // `data` and `input` on their own are refs in OPA.
        if (t.name === "data" || t.name === "input")
          return term("ref", makeArray([term("var", makeString(t.name))]));
        return term("var", makeString(t.name));
      case "ref": {
        const head = t.head.type === "var" ? term("var", makeString(t.head.name)) : this.term(t.head);
        return term("ref", makeArray([head, ...t.path.map((p) => this.term(p))]));
      }
      case "array":
        return term("array", makeArray(t.items.map((i) => this.term(i))));
      case "set":
        return term("set", makeArray([...t.items].sort(termOrder).map((i) => this.term(i))));
      case "object":
        return term(
          "object",
          makeArray(
            [...t.entries]
              .sort(([a], [b]) => termOrder(a, b))
              .map(([k, v]) => makeArray([this.term(k), this.term(v)])),
          ),
        );
      case "arraycompr":
        return term(
          "arraycomprehension",
          obj([
            ["term", this.term(t.term)],
            ["body", this.body(t.body)],
          ]),
        );
      case "setcompr":
        return term(
          "setcomprehension",
          obj([
            ["term", this.term(t.term)],
            ["body", this.body(t.body)],
          ]),
        );
      case "objectcompr":
        return term(
          "objectcomprehension",
          obj([
            ["key", this.term(t.key)],
            ["value", this.term(t.value)],
            ["body", this.body(t.body)],
          ]),
        );
      case "call":
        return term("call", makeArray([this.operator(t.op), ...t.args.map((a) => this.term(a))]));
      case "templatestring":
        return term(
          "templatestring",
          obj([
            ["multi_line", makeBoolean(t.raw)],
            ["parts", makeArray(t.parts.map((p) => (isTemplateExpr(p) ? this.expr(p, 0) : this.term(p))))],
          ]),
        );
    }
  }
}

function str(s: string): Value {
  return term("string", makeString(s));
}

function trueExpr(loc: ast.Location): ast.Expr {
  return { negated: false, node: { type: "boolean", value: true, loc }, with: [], loc };
}

function comment(c: ast.Comment): Value {
  return obj([
    ["Text", makeString(Buffer.from(c.text, "utf8").toString("base64"))],
    [
      "Location",
      obj([
        ["file", makeString(c.loc.file)],
        ["row", numberFromText(String(c.loc.line))],
        ["col", numberFromText(String(c.loc.col))],
      ]),
    ],
  ]);
}

/** OPA's JSON encoding of a module, as a Rego value. */
export function moduleToValue(module: ast.Module): Value {
  return new Encoder().module(module);
}
