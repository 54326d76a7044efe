/**
 * `strings.render_template`, following OPA's `v1/topdown/template.go`: Go's `text/template`
 * executed with `missingkey=error` over the variables as Go sees them after a JSON round trip
 * (objects are maps, sets and arrays are slices, numbers are `json.Number` strings).
 *
 * Supported: text and `{{…}}` actions with `-` trim markers and comments; fields `.a.b`,
 * `$var.a`, `$`, `.`; literals; pipelines with `|`; parenthesized pipelines; variable
 * declaration and assignment; `if`/`else if`/`else`, `range` (with `$i, $v :=`, `else`,
 * `break`, `continue`), `with`/`else`; and the builtin functions `and`, `or`, `not`, `len`,
 * `index`, `slice`, `print`, `printf`, `println`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`, `html`,
 * `js`, `urlquery`; `define`, `template` and `block`.
 */
import { goQuote, type Value } from "../../plan/value.ts";
import { define, fail, objectArg, str, stringArg } from "../registry.ts";
import { type GoArg, goSprintf } from "./core.ts";

// ------------------------------------------------------------------------------------ Go values

/** A `json.Number`: a string type holding the number's text. */
class JsonNumber {
  constructor(readonly text: string) {}
}

/** A template integer or float constant. */
class GoNumber {
  constructor(
    readonly value: number,
    readonly isInt: boolean,
  ) {}
}

type GoValue = null | boolean | string | JsonNumber | GoNumber | GoValue[] | Map<string, GoValue>;

function toGo(v: Value): GoValue {
  switch (v.type) {
    case "null":
      return null;
    case "boolean":
      return v.value;
    case "string":
      return v.value;
    case "number":
      return new JsonNumber(v.text);
    case "array":
      return v.items.map(toGo);
    case "set":
      return v.elements().map(toGo);
    case "object": {
      const entries = v
        .entries()
        .map(([k, x]): [string, GoValue] => [
          k.type === "string" ? k.value : JSON.stringify(toGoJSON(k)),
          toGo(x),
        ]);
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return new Map(entries);
    }
  }
}

function toGoJSON(v: Value): unknown {
  if (v.type === "number") return Number(v.text);
  if (v.type === "array") return v.items.map(toGoJSON);
  if (v.type === "set") return v.elements().map(toGoJSON);
  if (v.type === "object")
    return Object.fromEntries(v.entries().map(([k, x]) => [String(toGoJSON(k)), toGoJSON(x)]));
  return v.type === "null" ? null : v.value;
}

function typeOf(v: GoValue): string {
  if (v === null) return "<nil>";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (v instanceof JsonNumber) return "json.Number";
  if (v instanceof GoNumber) return v.isInt ? "int" : "float64";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

/** fmt's `%v`. */
function formatGo(v: GoValue, top = true): string {
  if (v === null) return top ? "<nil>" : "<nil>";
  if (typeof v === "boolean" || typeof v === "string") return String(v);
  if (v instanceof JsonNumber) return v.text;
  if (v instanceof GoNumber)
    return v.isInt ? String(v.value) : goSprintf("%v", [{ kind: "float", value: v.value }]);
  if (Array.isArray(v)) return `[${v.map((x) => formatGo(x, false)).join(" ")}]`;
  return `map[${[...v].map(([k, x]) => `${k}:${formatGo(x, false)}`).join(" ")}]`;
}

function isTrue(v: GoValue): boolean {
  if (v === null) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "string") return v !== "";
  if (v instanceof JsonNumber) return v.text !== "";
  if (v instanceof GoNumber) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  return v.size > 0;
}

// ------------------------------------------------------------------------------------ parsing

type Operand =
  | { kind: "dot"; pos: number; fields: string[] }
  | { kind: "var"; pos: number; name: string; fields: string[] }
  | { kind: "ident"; pos: number; name: string }
  | { kind: "lit"; pos: number; value: GoValue; text: string }
  | { kind: "pipe"; pos: number; pipe: Pipeline; fields: string[] };

interface Pipeline {
  pos: number;
  decls: string[];
  assign: boolean;
  cmds: Operand[][];
}

interface ControlNode {
  kind: "if" | "with" | "range";
  pipe: Pipeline;
  list: Node[];
  elseList: Node[];
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: Pipeline }
  | ControlNode
  | { kind: "break" | "continue"; pos: number }
  | { kind: "template"; name: string; pipe: Pipeline | undefined; pos: number };

const FUNCTIONS = new Set([
  "and",
  "or",
  "not",
  "len",
  "index",
  "slice",
  "print",
  "printf",
  "println",
  "eq",
  "ne",
  "lt",
  "le",
  "gt",
  "ge",
  "html",
  "js",
  "urlquery",
  "call",
]);

type Token =
  | { t: "text"; text: string; pos: number }
  | { t: "action"; body: string; pos: number }
  | { t: "eof"; pos: number };

class TemplateParser {
  private readonly tokens: Token[] = [];
  private i = 0;

  /** The templates named by `define` and `block`. */
  readonly defined = new Map<string, Node[]>();

  constructor(private readonly src: string) {
    this.lex();
  }

  line(pos: number): number {
    return this.src.slice(0, pos).split("\n").length;
  }

  private error(pos: number, message: string): never {
    return fail(`template: template:${this.line(pos)}: ${message}`);
  }

  private lex(): void {
    const s = this.src;
    let pos = 0;
    let trimNext = false;
    while (pos <= s.length) {
      const open = s.indexOf("{{", pos);
      let text = open < 0 ? s.slice(pos) : s.slice(pos, open);
      if (trimNext) text = text.replace(/^[ \t\r\n]+/, "");
      if (open < 0) {
        if (text) this.tokens.push({ t: "text", text, pos });
        break;
      }
      let bodyStart = open + 2;
      if (/^-[ \t\r\n]/.test(s.slice(bodyStart, bodyStart + 2))) {
        text = trimTrailingSpace(text);
        bodyStart += 1;
      }
      if (text) this.tokens.push({ t: "text", text, pos });
      const close = this.findClose(bodyStart);
      if (close < 0) this.error(open, "unclosed action");
      let bodyEnd = close;
      trimNext = false;
      if (close >= 1 && s[close - 1] === "-" && /[ \t\r\n]/.test(s[close - 2] ?? "")) {
        bodyEnd = close - 1;
        trimNext = true;
      }
      const body = s.slice(bodyStart, bodyEnd);
      const trimmed = body.trim();
      if (trimmed.startsWith("/*")) {
        if (!trimmed.endsWith("*/")) this.error(open, "unclosed comment");
      } else this.tokens.push({ t: "action", body, pos: bodyStart });
      pos = close + 2;
    }
    this.tokens.push({ t: "eof", pos: s.length });
  }

  /** The `}}` closing the action whose body starts at `from`, skipping quoted strings and comments. */
  private findClose(from: number): number {
    const s = this.src;
    let k = from;
    while (k < s.length) {
      const c = s[k];
      if (c === '"' || c === "'") {
        k++;
        while (k < s.length && s[k] !== c) {
          if (s[k] === "\\") k++;
          if (s[k] === "\n") return -1;
          k++;
        }
        k++;
      } else if (c === "`") {
        const end = s.indexOf("`", k + 1);
        if (end < 0) return -1;
        k = end + 1;
      } else if (s.startsWith("/*", k)) {
        const end = s.indexOf("*/", k + 2);
        if (end < 0) return -1;
        k = end + 2;
      } else if (s.startsWith("}}", k)) return k;
      else k++;
    }
    return -1;
  }

  parse(): Node[] {
    const [list, end] = this.list(false);
    if (end !== "eof") this.error(this.tokens[this.i - 1]?.pos ?? 0, `unexpected {{${end}}}`);
    return list;
  }

  /** Nodes up to `{{end}}`, `{{else …}}` or the end of input; returns which ended the list. */
  private list(inBlock: boolean): [Node[], "end" | "else" | "eof", Token?] {
    const nodes: Node[] = [];
    for (;;) {
      const tok = this.tokens[this.i++];
      if (tok === undefined || tok.t === "eof") {
        if (inBlock) this.error(this.src.length, "unexpected EOF");
        return [nodes, "eof"];
      }
      if (tok.t === "text") {
        nodes.push({ kind: "text", text: tok.text });
        continue;
      }
      const words = new ActionLexer(tok.body, tok.pos, this);
      const keyword = words.peekWord();
      switch (keyword) {
        case "end":
          words.next();
          words.expectEnd("end");
          if (!inBlock) this.error(tok.pos, "unexpected {{end}}");
          return [nodes, "end"];
        case "else":
          if (!inBlock) this.error(tok.pos, "unexpected {{else}}");
          return [nodes, "else", tok];
        case "if":
        case "with":
        case "range":
          words.next();
          nodes.push(this.control(keyword, words, tok.pos));
          break;
        case "break":
        case "continue":
          words.next();
          words.expectEnd(keyword);
          nodes.push({ kind: keyword, pos: tok.pos });
          break;
        case "define":
        case "block": {
          words.next();
          const name = words.templateName(keyword);
          const pipe = keyword === "block" ? words.pipeline(false, false) : undefined;
          if (keyword === "define") words.expectEnd("define clause");
          const [body, end] = this.list(true);
          if (end !== "end") this.error(tok.pos, `unexpected {{else}} in ${keyword}`);
          this.defined.set(name, body);
          if (keyword === "block") nodes.push({ kind: "template", name, pipe, pos: tok.pos });
          break;
        }
        case "template": {
          words.next();
          const name = words.templateName(keyword);
          const pipe = words.pipeline(false, false);
          nodes.push({ kind: "template", name, pipe: pipe.cmds.length > 0 ? pipe : undefined, pos: tok.pos });
          break;
        }
        default:
          nodes.push({ kind: "action", pipe: words.pipeline(true, true) });
      }
    }
  }

  private control(kind: "if" | "with" | "range", words: ActionLexer, pos: number): Node {
    const pipe = words.pipeline(true, kind === "range");
    if (pipe.cmds.length === 0) this.error(pos, `missing value for ${kind}`);
    const [list, end, elseTok] = this.list(true);
    let elseList: Node[] = [];
    if (end === "else" && elseTok?.t === "action") {
      const elseWords = new ActionLexer(elseTok.body, elseTok.pos, this);
      elseWords.next();
      const chained = elseWords.peekWord();
      if ((chained === "if" && kind === "if") || (chained === "with" && kind === "with")) {
        elseWords.next();
        // `{{else if …}}` is `{{else}}{{if …}}…{{end}}` sharing this block's `{{end}}`.
        elseList = [this.control(chained, elseWords, elseTok.pos)];
      } else {
        elseWords.expectEnd("else");
        const [rest, end2] = this.list(true);
        if (end2 !== "end") this.error(elseTok.pos, "expected end; found {{else}}");
        elseList = rest;
      }
    }
    return { kind, pipe, list, elseList };
  }
}

/** The text without its trailing spaces, tabs and newlines (a loop: a regex would be quadratic). */
function trimTrailingSpace(text: string): string {
  let end = text.length;
  while (end > 0 && " \t\r\n".includes(text[end - 1] ?? "x")) end--;
  return text.slice(0, end);
}

/** The words of one action. */
class ActionLexer {
  private k = 0;

  constructor(
    private readonly body: string,
    private readonly base: number,
    private readonly parser: TemplateParser,
  ) {}

  private error(message: string): never {
    return fail(`template: template:${this.parser.line(this.base)}: ${message}`);
  }

  private skipSpace(): void {
    while (this.k < this.body.length && /[ \t\r\n]/.test(this.body[this.k] ?? "")) this.k++;
  }

  peekWord(): string | undefined {
    this.skipSpace();
    return /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.body.slice(this.k))?.[0];
  }

  next(): void {
    const w = this.peekWord();
    if (w) this.k += w.length;
  }

  /** The quoted name after `define`, `template` or `block`. */
  templateName(keyword: string): string {
    this.skipSpace();
    const op = this.body[this.k] === '"' || this.body[this.k] === "`" ? this.operand() : undefined;
    if (op?.kind !== "lit" || typeof op.value !== "string")
      return this.error(`unexpected name in ${keyword} clause`);
    return op.value;
  }

  expectEnd(keyword: string): void {
    this.skipSpace();
    if (this.k < this.body.length)
      this.error(`unexpected ${goQuote(this.body.slice(this.k).trim())} in ${keyword}`);
  }

  private pos(): number {
    return this.base + this.k;
  }

  /** A pipeline up to the end of the action (or a closing parenthesis when nested). */
  pipeline(allowDecl: boolean, allowTwo: boolean, nested = false): Pipeline {
    const pipe: Pipeline = { pos: this.pos(), decls: [], assign: false, cmds: [] };
    if (allowDecl) {
      const decl =
        /^[ \t\r\n]*(\$[A-Za-z0-9_]*)[ \t\r\n]*(?:(,)[ \t\r\n]*(\$[A-Za-z0-9_]*)[ \t\r\n]*)?(:=|=)(?!=)/.exec(
          this.body.slice(this.k),
        );
      if (decl && (decl[2] === undefined || allowTwo)) {
        pipe.decls = decl[3] === undefined ? [decl[1] ?? "$"] : [decl[1] ?? "$", decl[3]];
        pipe.assign = decl[4] === "=";
        this.k += decl[0].length;
      }
    }
    let cmd: Operand[] = [];
    for (;;) {
      this.skipSpace();
      const c = this.body[this.k];
      if (c === undefined || (nested && c === ")")) break;
      if (c === "|") {
        if (cmd.length === 0) this.error("missing command");
        pipe.cmds.push(cmd);
        cmd = [];
        this.k++;
        continue;
      }
      cmd.push(this.operand());
    }
    if (cmd.length > 0) pipe.cmds.push(cmd);
    else if (pipe.cmds.length > 0) this.error("missing command");
    if (pipe.decls.length > 0 && pipe.cmds.length === 0) this.error("missing value for command");
    return pipe;
  }

  private fields(): string[] {
    const out: string[] = [];
    for (;;) {
      const m = /^\.([A-Za-z_][A-Za-z0-9_]*)/.exec(this.body.slice(this.k));
      if (!m) return out;
      out.push(m[1] ?? "");
      this.k += m[0].length;
    }
  }

  private operand(): Operand {
    const pos = this.pos();
    const rest = this.body.slice(this.k);
    const c = rest[0] ?? "";
    if (c === "(") {
      this.k++;
      const pipe = this.pipeline(true, false, true);
      if (this.body[this.k] !== ")") this.error("unclosed left paren");
      this.k++;
      return { kind: "pipe", pos, pipe, fields: this.fields() };
    }
    if (c === ".") {
      if (/^\.[A-Za-z_]/.test(rest)) return { kind: "dot", pos, fields: this.fields() };
      if (!/^\.[0-9]/.test(rest)) {
        this.k++;
        return { kind: "dot", pos, fields: [] };
      }
    }
    if (c === "$") {
      const m = /^\$[A-Za-z0-9_]*/.exec(rest);
      this.k += m?.[0].length ?? 1;
      return { kind: "var", pos, name: m?.[0] ?? "$", fields: this.fields() };
    }
    if (c === '"' || c === "`") {
      const m = c === "`" ? /^`[^`]*`/.exec(rest) : /^"(?:[^"\\\n]|\\.)*"/.exec(rest);
      if (!m) this.error("unterminated quoted string");
      this.k += m[0].length;
      return { kind: "lit", pos, value: c === "`" ? m[0].slice(1, -1) : unquoteGo(m[0]), text: m[0] };
    }
    if (c === "'") {
      const m = /^'(?:[^'\\\n]|\\.[^']*)'/.exec(rest);
      if (!m) this.error("unterminated character constant");
      this.k += m[0].length;
      const ch = unquoteGo(`"${m[0].slice(1, -1)}"`);
      return { kind: "lit", pos, value: new GoNumber(ch.codePointAt(0) ?? 0, true), text: m[0] };
    }
    const num =
      /^[+-]?(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)/.exec(
        rest,
      );
    if (num && /^[+-]?\.?\d/.test(rest)) {
      this.k += num[0].length;
      const text = num[0].replaceAll("_", "");
      const isInt = !/[.eE]/.test(text) || /^[+-]?0[xX]/.test(text);
      const sign = text.startsWith("-") ? -1 : 1;
      const unsigned = text.replace(/^[+-]/, "");
      const value = isInt ? sign * Number(unsigned.replace(/^0([0-7]+)$/, "0o$1")) : Number(text);
      if (Number.isNaN(value)) this.error(`bad number syntax: ${goQuote(num[0])}`);
      return { kind: "lit", pos, value: new GoNumber(value, isInt), text: num[0] };
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)?.[0];
    if (word) {
      this.k += word.length;
      if (word === "true" || word === "false")
        return { kind: "lit", pos, value: word === "true", text: word };
      if (word === "nil") return { kind: "lit", pos, value: null, text: word };
      if (!FUNCTIONS.has(word)) this.error(`function ${goQuote(word)} not defined`);
      return { kind: "ident", pos, name: word };
    }
    return this.error(`unexpected ${goQuote(c)} in command`);
  }
}

/** A Go interpreted string literal. */
function unquoteGo(lit: string): string {
  return lit
    .slice(1, -1)
    .replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/g, (_, e: string) => {
      const simple: Record<string, string> = {
        a: "\x07",
        b: "\b",
        f: "\f",
        n: "\n",
        r: "\r",
        t: "\t",
        v: "\v",
        "\\": "\\",
        '"': '"',
        "'": "'",
      };
      if (e.length === 1) return simple[e] ?? e;
      if (/^[0-7]{3}$/.test(e)) return String.fromCodePoint(Number.parseInt(e, 8));
      return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
    });
}

// ------------------------------------------------------------------------------------ execution

class BreakSignal {}
class ContinueSignal {}

const MAX_OUTPUT = 64 * 1024 * 1024;
/** Go allows 100,000 nested template calls; a JavaScript stack holds fewer. */
const MAX_TEMPLATE_DEPTH = 1000;

class Executor {
  private out = "";
  private readonly vars: Array<[string, GoValue]>;

  constructor(
    private readonly parser: TemplateParser,
    root: GoValue,
  ) {
    this.vars = [["$", root]];
  }

  private error(pos: number, context: string, message: string): never {
    const before = this.parserSource().slice(0, pos);
    const nl = before.lastIndexOf("\n");
    const col = nl < 0 ? pos : pos - nl - 1;
    return fail(
      `template: template:${this.parser.line(pos)}:${col}: executing "template" at <${context.slice(0, 20)}>: ${message}`,
    );
  }

  private parserSource(): string {
    return this.source;
  }

  source = "";

  run(nodes: Node[], dot: GoValue): string {
    this.walk(nodes, dot);
    return this.out;
  }

  private write(s: string): void {
    this.out += s;
    if (this.out.length > MAX_OUTPUT) fail("template: output too large");
  }

  private walk(nodes: readonly Node[], dot: GoValue): void {
    for (const node of nodes) {
      switch (node.kind) {
        case "text":
          this.write(node.text);
          break;
        case "action": {
          const v = this.pipeline(node.pipe, dot);
          if (node.pipe.decls.length === 0) this.write(v === null ? "<no value>" : formatGo(v));
          break;
        }
        case "if":
        case "with": {
          const mark = this.vars.length;
          const v = this.pipeline(node.pipe, dot);
          if (isTrue(v)) this.walk(node.list, node.kind === "with" ? v : dot);
          else this.walk(node.elseList, dot);
          this.vars.length = mark;
          break;
        }
        case "range":
          this.range(node, dot);
          break;
        case "template":
          this.callTemplate(node, dot);
          break;
        case "break":
          throw new BreakSignal();
        case "continue":
          throw new ContinueSignal();
      }
    }
  }

  private depth = 0;

  private callTemplate(node: Extract<Node, { kind: "template" }>, dot: GoValue): void {
    const body = this.parser.defined.get(node.name);
    const context = `{{template ${goQuote(node.name)}}}`;
    if (!body) return this.error(node.pos, context, `template ${goQuote(node.name)} not defined`);
    if (this.depth >= MAX_TEMPLATE_DEPTH)
      this.error(node.pos, context, `exceeded maximum template depth (${MAX_TEMPLATE_DEPTH})`);
    const value = node.pipe ? this.pipeline(node.pipe, dot) : null;
    const saved = this.vars.splice(0, this.vars.length, ["$", value]);
    this.depth++;
    try {
      this.walk(body, value);
    } finally {
      this.depth--;
      this.vars.splice(0, this.vars.length, ...saved);
    }
  }

  private range(node: ControlNode, dot: GoValue): void {
    const mark = this.vars.length;
    const decls = node.pipe.decls;
    const v = this.pipeline({ ...node.pipe, decls: [] }, dot);
    let items: Array<[GoValue, GoValue]>;
    if (v === null) items = [];
    else if (Array.isArray(v)) items = v.map((x, i) => [new GoNumber(i, true), x]);
    else if (v instanceof Map) items = [...v].map(([k, x]) => [k, x]);
    else if (v instanceof GoNumber && v.isInt)
      items = Array.from({ length: Math.max(0, v.value) }, (_, i) => [
        new GoNumber(i, true),
        new GoNumber(i, true),
      ]);
    else return this.error(node.pipe.pos, "range", `range can't iterate over ${formatGo(v)}`);
    if (items.length === 0) {
      this.walk(node.elseList, dot);
      this.vars.length = mark;
      return;
    }
    for (const [key, value] of items) {
      if (decls.length === 1) this.vars.push([decls[0] ?? "$", value]);
      else if (decls.length === 2) this.vars.push([decls[0] ?? "$", key], [decls[1] ?? "$", value]);
      try {
        this.walk(node.list, value);
      } catch (e) {
        if (e instanceof BreakSignal) {
          this.vars.length = mark;
          break;
        }
        if (!(e instanceof ContinueSignal)) throw e;
      }
      this.vars.length = mark;
    }
    this.vars.length = mark;
  }

  private lookupVar(name: string, pos: number): GoValue {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      const entry = this.vars[i];
      if (entry && entry[0] === name) return entry[1];
    }
    return this.error(pos, name, `undefined variable: ${name}`);
  }

  private pipeline(pipe: Pipeline, dot: GoValue): GoValue {
    let value: GoValue | undefined;
    for (const cmd of pipe.cmds) value = this.command(cmd, dot, value);
    const result = value ?? null;
    if (pipe.decls.length > 0) {
      const name = pipe.decls[0] ?? "$";
      if (pipe.assign) {
        let found = false;
        for (let i = this.vars.length - 1; i >= 0; i--) {
          const entry = this.vars[i];
          if (entry && entry[0] === name) {
            entry[1] = result;
            found = true;
            break;
          }
        }
        if (!found) this.error(pipe.pos, name, `undefined variable: ${name}`);
      } else this.vars.push([name, result]);
    }
    return result;
  }

  private command(cmd: Operand[], dot: GoValue, piped: GoValue | undefined): GoValue {
    const [first, ...rest] = cmd;
    if (first === undefined) return null;
    if (first.kind === "ident") {
      const args: Array<() => GoValue> = rest.map((op) => () => this.operand(op, dot));
      if (piped !== undefined) args.push(() => piped);
      return this.call(first.name, args, first.pos);
    }
    if (rest.length > 0 || piped !== undefined)
      this.error(first.pos, describe(first), `can't give argument to non-function ${describe(first)}`);
    return this.operand(first, dot);
  }

  private operand(op: Operand, dot: GoValue): GoValue {
    switch (op.kind) {
      case "lit":
        return op.value;
      case "ident":
        return this.call(op.name, [], op.pos);
      case "dot":
        return this.fields(dot, op.fields, op);
      case "var":
        return this.fields(this.lookupVar(op.name, op.pos), op.fields, op);
      case "pipe": {
        const mark = this.vars.length;
        const v = this.pipeline(op.pipe, dot);
        this.vars.length = mark;
        return this.fields(v, op.fields, op);
      }
    }
  }

  private fields(v: GoValue, fields: readonly string[], op: Operand): GoValue {
    let cur = v;
    for (const f of fields) {
      if (cur instanceof Map) {
        if (!cur.has(f)) this.error(op.pos, describe(op), `map has no entry for key ${goQuote(f)}`);
        cur = cur.get(f) ?? null;
      } else if (cur === null) this.error(op.pos, describe(op), `nil pointer evaluating interface {}.${f}`);
      else this.error(op.pos, describe(op), `can't evaluate field ${f} in type ${typeOf(cur)}`);
    }
    return cur;
  }

  private call(name: string, args: Array<() => GoValue>, pos: number): GoValue {
    const fnError: (message: string) => never = (message) =>
      this.error(pos, name, `error calling ${name}: ${message}`);
    const wrongArgs: (want: string) => never = (want) =>
      this.error(pos, name, `wrong number of args for ${name}: want ${want} got ${args.length}`);
    switch (name) {
      case "and":
      case "or": {
        if (args.length < 1) wrongArgs("at least 1");
        let v: GoValue = null;
        for (const a of args) {
          v = a();
          if (isTrue(v) !== (name === "and")) return v;
        }
        return v;
      }
      case "not":
        if (args.length !== 1) wrongArgs("1");
        return !isTrue(args[0]?.() ?? null);
      case "len": {
        if (args.length !== 1) wrongArgs("1");
        const v = args[0]?.() ?? null;
        if (typeof v === "string") return new GoNumber(Buffer.byteLength(v), true);
        if (v instanceof JsonNumber) return new GoNumber(v.text.length, true);
        if (Array.isArray(v)) return new GoNumber(v.length, true);
        if (v instanceof Map) return new GoNumber(v.size, true);
        return fnError(`len of ${v === null ? "nil pointer" : `type ${typeOf(v)}`}`);
      }
      case "index": {
        if (args.length < 1) wrongArgs("at least 1");
        let v = args[0]?.() ?? null;
        for (const a of args.slice(1)) {
          const key = a();
          if (v === null) fnError("index of untyped nil");
          if (Array.isArray(v)) {
            if (!(key instanceof GoNumber && key.isInt))
              fnError(`cannot index slice/array with type ${typeOf(key)}`);
            if (key.value < 0 || key.value >= v.length) fnError(`index out of range: ${key.value}`);
            v = v[key.value] ?? null;
          } else if (v instanceof Map) {
            if (typeof key !== "string") fnError(`value has type ${typeOf(key)}; should be string`);
            v = v.get(key) ?? null;
          } else if (typeof v === "string" || v instanceof JsonNumber) {
            const bytes = Buffer.from(typeof v === "string" ? v : v.text);
            if (!(key instanceof GoNumber && key.isInt))
              fnError(`cannot index slice/array with type ${typeOf(key)}`);
            if (key.value < 0 || key.value >= bytes.length) fnError(`index out of range: ${key.value}`);
            v = new GoNumber(bytes[key.value] ?? 0, true);
          } else fnError(`can't index item of type ${typeOf(v)}`);
        }
        return v;
      }
      case "slice": {
        if (args.length < 1) wrongArgs("at least 1");
        const v = args[0]?.() ?? null;
        const idx = args.slice(1).map((a) => {
          const x = a();
          return x instanceof GoNumber && x.isInt
            ? x.value
            : fnError(`cannot index slice/array with type ${typeOf(x)}`);
        });
        if (idx.length > 3) fnError(`too many slice indexes: ${idx.length}`);
        if (Array.isArray(v)) {
          const [i = 0, j = v.length] = idx;
          if (i < 0 || j < i || j > v.length) fnError(`index out of range: ${j}`);
          return v.slice(i, j);
        }
        if (typeof v === "string") {
          if (idx.length === 3) fnError("cannot 3-index slice a string");
          const bytes = Buffer.from(v);
          const [i = 0, j = bytes.length] = idx;
          if (i < 0 || j < i || j > bytes.length) fnError(`index out of range: ${j}`);
          return bytes.subarray(i, j).toString();
        }
        return fnError(`can't slice item of type ${typeOf(v)}`);
      }
      case "print":
        return sprint(args.map((a) => a()));
      case "println":
        return `${args.map((a) => formatGo(a())).join(" ")}\n`;
      case "printf": {
        if (args.length < 1) wrongArgs("at least 1");
        const format = args[0]?.() ?? null;
        if (typeof format !== "string")
          return fnError(`wrong type for value; expected string; got ${typeOf(format)}`);
        return goSprintf(
          format,
          args.slice(1).map((a) => toGoArg(a())),
        );
      }
      case "eq":
      case "ne":
      case "lt":
      case "le":
      case "gt":
      case "ge":
        return this.compare(name, args, pos);
      case "html":
        return sprint(args.map((a) => a())).replace(
          /[<>&'"\0]/g,
          (c) =>
            ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;", "\0": "\uFFFD" })[c] ?? c,
        );
      case "js":
        return sprint(args.map((a) => a())).replace(/[\\'"<>&=\n\r\t]/g, (c) => {
          const named: Record<string, string> = {
            "\\": "\\\\",
            "'": "\\'",
            '"': '\\"',
            "\n": "\\n",
            "\r": "\\r",
            "\t": "\\t",
          };
          return named[c] ?? `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
        });
      case "urlquery":
        return encodeURIComponent(sprint(args.map((a) => a())))
          .replace(/%20/g, "+")
          .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
          .replace(/%7E/g, "~");
      default:
        return fnError("call of non-function");
    }
  }

  private compare(name: string, args: Array<() => GoValue>, pos: number): GoValue {
    const fail2: (message: string) => never = (message) =>
      this.error(pos, name, `error calling ${name}: ${message}`);
    if (name === "eq" || name === "ne") {
      if (args.length < 2 && name === "eq") fail2("missing argument for comparison");
      if (name === "ne" && args.length !== 2)
        this.error(pos, name, `wrong number of args for ne: want 2 got ${args.length}`);
    } else if (args.length !== 2)
      this.error(pos, name, `wrong number of args for ${name}: want 2 got ${args.length}`);
    const a = basic(args[0]?.() ?? null, fail2);
    if (name === "eq") {
      for (const next of args.slice(1)) {
        const b = basic(next(), fail2);
        if (a.kind !== b.kind) fail2("incompatible types for comparison");
        if (a.value === b.value) return true;
      }
      return false;
    }
    const b = basic(args[1]?.() ?? null, fail2);
    if (a.kind !== b.kind) fail2("incompatible types for comparison");
    if (name === "ne") return a.value !== b.value;
    if (a.kind === "bool") fail2("invalid type for comparison");
    const lt = a.value < b.value;
    const eq = a.value === b.value;
    if (name === "lt") return lt;
    if (name === "le") return lt || eq;
    if (name === "gt") return !lt && !eq;
    return !lt;
  }
}

function basic(
  v: GoValue,
  onError: (m: string) => never,
): { kind: string; value: string | number | boolean } {
  if (typeof v === "boolean") return { kind: "bool", value: v };
  if (typeof v === "string") return { kind: "string", value: v };
  if (v instanceof JsonNumber) return { kind: "string", value: v.text };
  if (v instanceof GoNumber) return { kind: v.isInt ? "int" : "float", value: v.value };
  if (v === null) return onError("invalid type for comparison");
  return onError("non-comparable type");
}

/** fmt.Sprint: a space between operands when neither is a string. */
function sprint(values: readonly GoValue[]): string {
  let out = "";
  values.forEach((v, i) => {
    const isString = typeof v === "string" || v instanceof JsonNumber;
    const prev = values[i - 1];
    const prevString = typeof prev === "string" || prev instanceof JsonNumber;
    if (i > 0 && !isString && !prevString) out += " ";
    out += formatGo(v);
  });
  return out;
}

function toGoArg(v: GoValue): GoArg {
  if (v instanceof GoNumber)
    return v.isInt ? { kind: "int", value: BigInt(v.value) } : { kind: "float", value: v.value };
  if (typeof v === "string") return { kind: "string", value: v };
  return { kind: "string", value: formatGo(v) };
}

function describe(op: Operand): string {
  switch (op.kind) {
    case "dot":
      return op.fields.length === 0 ? "." : `.${op.fields.join(".")}`;
    case "var":
      return `${op.name}${op.fields.map((f) => `.${f}`).join("")}`;
    case "ident":
      return op.name;
    case "lit":
      return op.text;
    case "pipe":
      return "(...)";
  }
}

/** Renders a Go text/template over the variables, as `strings.render_template`. */
export function renderTemplate(template: string, variables: Value): string {
  const parser = new TemplateParser(template);
  const nodes = parser.parse();
  const root = toGo(variables);
  const exec = new Executor(parser, root);
  exec.source = template;
  try {
    return exec.run(nodes, root);
  } catch (e) {
    if (e instanceof BreakSignal || e instanceof ContinueSignal)
      return fail("template: break or continue outside range");
    throw e;
  }
}

define("strings.render_template", (args) => {
  const template = stringArg(args, 0);
  const variables = objectArg(args, 1);
  return str(renderTemplate(template, variables));
});
