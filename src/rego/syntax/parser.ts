/**
 * The Rego v1 parser: a hand-written recursive-descent parser that mirrors OPA's `ast/parser.go`
 * (same precedence chain, same newline and whitespace rules, same error messages), with two
 * differences in what it reports:
 *
 * - It recovers after a statement that fails to parse (it skips to the next line that starts at
 *   column 1 with a name or `package`/`import`/`default`) so one file can report several errors.
 *   OPA stops at the first failing statement.
 * - It reports OPA's Rego v1 checks (`if` required before rule bodies, `contains` required for
 *   partial set rules, statements that cannot be rules) alongside syntax errors, sorted by
 *   position. OPA reports them only when the file has no syntax error.
 *
 * Where OPA backtracks and re-parses (the first element of arrays, sets and objects, which may
 * start a comprehension), this parser instead continues the infix expression from the element it
 * already parsed, which gives the same tree without the re-parse.
 */
import { type Location, RegoError } from "../errors.ts";
import { parseAnnotations } from "./annotations.ts";
import type {
  AnnotationTarget,
  Body,
  CallTerm,
  Every,
  Expr,
  Import,
  Module,
  Package,
  RefTerm,
  Rule,
  RuleHead,
  ScalarTerm,
  SomeDecl,
  Term,
  VarTerm,
  With,
} from "./ast.ts";
import {
  COL,
  decodeStringLiteral,
  END,
  FUTURE_KEYWORDS_V0,
  isKeyword,
  isKeywordKind,
  KIND_AND_FLAGS,
  LINE,
  NL_BEFORE,
  numberLiteralProblem,
  type RegoVersion,
  recycleTokens,
  START,
  TEMPLATE_RESUME,
  TOKEN_NAMES,
  TOKEN_STRIDE,
  Tok,
  type TokenStream,
  tokenize,
  WS_BEFORE,
} from "./lexer.ts";
import { MEMBER_2, MEMBER_3, operatorName, printTerm } from "./printer.ts";

/** How deeply terms and bodies may nest before the parser gives up (instead of overflowing). */
const MAX_NESTING = 1000;

const DOUBLE_QUOTE = 34;
const ROOT_DOCUMENTS = new Set(["data", "input"]);
const IMPORT_ROOTS = new Set(["data", "input", "future", "rego"]);
/**
 * Keywords `import future.keywords.<kw>` accepts (sorted, as OPA lists them). `not` is a newer
 * OPA future keyword that enables `not { body }` (`not <expr>` means the same with or without
 * it); `and` and `or` enable logical operators between expressions (`a or b`, `{ … } and c`).
 */
const FUTURE_KEYWORDS = ["and", "contains", "every", "if", "in", "not", "or"];

/** Operators that OPA's builtin table knows; a top-level call to one of them is not a rule. */
const OPERATOR_BUILTINS = new Set([
  "eq",
  "assign",
  "equal",
  "neq",
  "lt",
  "lte",
  "gt",
  "gte",
  "plus",
  "minus",
  "mul",
  "div",
  "rem",
  "and",
  "or",
  MEMBER_2,
  MEMBER_3,
]);

export interface ModuleResult {
  module: Module | undefined;
  errors: RegoError[];
}

export interface ParseOptions {
  /**
   * The Rego version of the source (default 1). In Rego v0 (OPA's `RegoV0`, `--v0-compatible`)
   * `in`, `every`, `contains` and `if` are names until `import future.keywords[.kw]` (or
   * `import rego.v1`, which also makes the module follow v1's rules) enables them, and rule
   * bodies need no `if`: `p[x] { … }` is a partial set rule and a bare `p[x]` or `a.b.c`
   * statement a rule. A v0 module parses to the same AST as its v1 spelling.
   */
  regoVersion?: RegoVersion;
}

export interface ModuleOptions extends ParseOptions {
  /**
   * Read `# METADATA` blocks (default true). OPA's loaders do; its plain `ast.ParseModule`
   * (used by `rego.parse_module`) does not, and then leaves `annotations` empty.
   */
  annotations?: boolean;
}

export interface QueryResult {
  body: Body | undefined;
  errors: RegoError[];
}

export interface TermResult {
  term: Term | undefined;
  errors: RegoError[];
}

/** Parses a module. Never throws; `module` is undefined when there are errors. */
export function parseModuleSource(source: string, file: string, options: ModuleOptions = {}): ModuleResult {
  return run(
    source,
    file,
    options,
    (parser) => parser.parseModule(options.annotations ?? true),
    (errors) => ({ module: undefined, errors }),
  );
}

/** Parses a query (a body: expressions separated by `;` or newlines). Never throws. */
export function parseQuerySource(source: string, file: string, options: ParseOptions = {}): QueryResult {
  return run(
    source,
    file,
    options,
    (parser) => parser.parseQuery(),
    (errors) => ({ body: undefined, errors }),
  );
}

/** Parses a single term, such as an `input_term` value. Never throws. */
export function parseTermSource(source: string, file: string, options: ParseOptions = {}): TermResult {
  return run(
    source,
    file,
    options,
    (parser) => parser.parseSingleTerm(),
    (errors) => ({ term: undefined, errors }),
  );
}

/**
 * Runs one parse. A stack overflow on pathological input becomes a parse error rather than an
 * exception; the token buffer is recycled either way.
 */
function run<T>(
  source: string,
  file: string,
  options: ParseOptions,
  parse: (parser: Parser) => T,
  failed: (errors: RegoError[]) => T,
): T {
  const tokens = tokenize(source, file);
  try {
    return parse(new Parser(tokens, options.regoVersion ?? 1));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const loc = { file, line: 1, col: 1, offset: 0 };
    return failed([new RegoError("rego_parse_error", "max parsing recursion depth exceeded", loc)]);
  } finally {
    recycleTokens(tokens);
  }
}

type Statement =
  | { kind: "package"; pkg: Package }
  | { kind: "import"; imp: Import }
  /** Rules of one statement; empty when the statement parsed but cannot be a rule (reported). */
  | { kind: "rules"; rules: Rule[]; loc: Location };

/** An error found while parsing; turned into a `RegoError` only if it survives backtracking. */
interface ParseProblem {
  loc: Location;
  detail: string;
}

interface SavedState {
  pos: number;
  errors: number;
  identAt: number;
}

interface ParsedHead {
  head: RuleHead;
  usesContains: boolean;
  /** The head has no written value but stands for `true` (`p if …`, `f(x) if …`, `a.b.c if …`). */
  implicitValue: boolean;
  /** Number of terms in the head ref: 1 for `p`, 2 for `p[x]` and `a.b`. */
  refLength: number;
}

class Parser {
  private readonly ts: TokenStream;
  private readonly src: string;
  private readonly file: string;
  private readonly tokens: Int32Array;
  private pos = 0;
  /** Index of a keyword token to read as a name (`not.x`, `if.y` at the start of a literal). */
  private identAt = -1;
  private depth = 0;
  /** Set by `import future.keywords.not` (or `rego.v2`): enables negated bodies. */
  private notBodies = false;
  /** Set by `import future.keywords.and` / `.or`: those words become logical operators. */
  private andKeyword = false;
  private orKeyword = false;
  private readonly errors: ParseProblem[] = [];
  /** Errors count at the start of the current statement. */
  private statementErrorBase = 0;
  /** Statement-to-rule conversion errors; never rolled back. */
  private readonly checks: ParseProblem[] = [];
  /**
   * OPA's `CheckRegoV1` of each rule (`if` and `contains` required, …); never rolled back, and
   * reported only when the module follows v1's rules (`regoV1Rules`).
   */
  private readonly v1Checks: ParseProblem[] = [];
  /** The Rego version the parser was asked for (the default; `import rego.v1` does not change it). */
  private readonly version: RegoVersion;
  /** Rego v1, or v0 with `import rego.v1` (OPA's `RegoV0CompatV1`): v1's rules apply. */
  private regoV1Rules: boolean;
  /**
   * Token kind as the parser reads it, by scanned kind: in Rego v0 the future keywords read as
   * names until an import enables them (OPA's scanner adds keywords as imports are parsed).
   */
  private readonly kinds = Uint8Array.from({ length: 256 }, (_, kind) => kind);

  constructor(tokens: TokenStream, version: RegoVersion) {
    this.ts = tokens;
    this.src = tokens.source;
    this.file = tokens.file;
    this.tokens = tokens.tokens;
    this.version = version;
    this.regoV1Rules = version === 1;
    if (version === 0) for (const kind of FUTURE_KEYWORDS_V0.values()) this.kinds[kind] = Tok.Ident;
    this.recordScanErrors(0);
  }

  // -------------------------------------------------------------------------------------------
  // Entry points

  parseModule(annotations: boolean): ModuleResult {
    const statements: Statement[] = [];
    let firstStatementIsPackage: boolean | undefined;
    while (this.tok() !== Tok.EOF) {
      const start = this.pos;
      firstStatementIsPackage ??= this.tok() === Tok.Package;
      this.statementErrorBase = this.errors.length;
      const statement = this.parseStatement();
      if (statement !== undefined) {
        statements.push(statement);
      } else {
        if (this.errors.length === this.statementErrorBase) this.illegal("");
        this.recover(start);
      }
    }
    const module = this.assembleModule(statements, firstStatementIsPackage ?? false, annotations);
    const errors = this.allErrors();
    return errors.length > 0 ? { module: undefined, errors } : { module, errors };
  }

  parseQuery(): QueryResult {
    const body: Body = [];
    while (this.tok() !== Tok.EOF) {
      this.statementErrorBase = this.errors.length;
      const part = this.parseQueryBody(true, Tok.EOF);
      if (part === undefined) {
        if (this.errors.length === this.statementErrorBase) this.illegal("");
        break;
      }
      body.push(...part);
    }
    const errors = this.allErrors();
    return errors.length > 0 ? { body: undefined, errors } : { body, errors };
  }

  parseSingleTerm(): TermResult {
    const { body, errors } = this.parseQuery();
    if (body === undefined) return { term: undefined, errors };
    const expr = body[0];
    if (expr === undefined) {
      return { term: undefined, errors: [this.newError(this.loc(this.pos), "expected term")] };
    }
    if (body.length > 1) {
      return { term: undefined, errors: [this.newError(body[1]!.loc, "expected exactly one term")] };
    }
    const node = expr.node;
    if (
      expr.negated ||
      expr.with.length > 0 ||
      node.type === "some" ||
      node.type === "every" ||
      node.type === "body" ||
      node.type === "logical" ||
      node.type === "call"
    ) {
      return { term: undefined, errors: [this.newError(expr.loc, "expected term but got expression")] };
    }
    return { term: node, errors: [] };
  }

  // -------------------------------------------------------------------------------------------
  // Tokens, positions and errors

  private kindAt(index: number): number {
    return this.kinds[this.tokens[index * TOKEN_STRIDE + KIND_AND_FLAGS]! & 0xff]!;
  }

  private tok(): number {
    return this.kindAt(this.pos);
  }

  private startOf(index: number): number {
    return this.tokens[index * TOKEN_STRIDE + START]!;
  }

  private endOf(index: number): number {
    return this.tokens[index * TOKEN_STRIDE + END]!;
  }

  private text(index: number): string {
    return this.src.slice(this.startOf(index), this.endOf(index));
  }

  private loc(index: number): Location {
    const at = index * TOKEN_STRIDE;
    const tokens = this.tokens;
    return { file: this.file, line: tokens[at + LINE]!, col: tokens[at + COL]!, offset: tokens[at + START]! };
  }

  private hasSpaceBefore(index: number): boolean {
    return ((this.tokens[index * TOKEN_STRIDE + KIND_AND_FLAGS]! >> 8) & WS_BEFORE) !== 0;
  }

  private hasNewlineBefore(index: number): boolean {
    return ((this.tokens[index * TOKEN_STRIDE + KIND_AND_FLAGS]! >> 8) & NL_BEFORE) !== 0;
  }

  /** Whether the token after `index` is a `.` or `[` written directly after it (`not.x`). */
  private startsRef(index: number): boolean {
    const next = index + 1;
    if (next >= this.ts.count || this.hasSpaceBefore(next)) return false;
    const kind = this.kindAt(next);
    return kind === Tok.Dot || kind === Tok.LBrack;
  }

  /** OPA lets keywords name the first term of a ref when a `.` or `[` follows directly. */
  private keywordStartsRef(index: number): boolean {
    return isKeywordKind(this.kindAt(index)) && this.startsRef(index);
  }

  private isName(): boolean {
    const kind = this.tok();
    return kind === Tok.Ident || this.pos === this.identAt;
  }

  private advance(): void {
    if (this.pos < this.ts.count - 1) {
      this.pos++;
      this.recordScanErrors(this.pos);
    }
  }

  private recordScanErrors(index: number): void {
    const messages = this.ts.errors?.get(index);
    if (messages === undefined) return;
    for (const message of messages) this.error(this.loc(index), message);
  }

  private save(): SavedState {
    return { pos: this.pos, errors: this.errors.length, identAt: this.identAt };
  }

  private restore(state: SavedState): void {
    this.pos = state.pos;
    this.errors.length = state.errors;
    this.identAt = state.identAt;
  }

  private newError(loc: Location, detail: string): RegoError {
    return new RegoError("rego_parse_error", detail, loc);
  }

  private error(loc: Location, detail: string): void {
    this.errors.push({ loc, detail });
  }

  private check(loc: Location, detail: string): void {
    this.checks.push({ loc, detail });
  }

  /** A problem only under Rego v1's rules (OPA's `CheckRegoV1` of a rule). */
  private checkV1(loc: Location, detail: string): void {
    this.v1Checks.push({ loc, detail });
  }

  /** OPA's `illegal`: `unexpected <token> token[: note]`, or `illegal token` for a bad token. */
  private illegal(note: string): void {
    const kind = this.tok();
    if (kind === Tok.Illegal) {
      this.error(this.loc(this.pos), "illegal token");
      return;
    }
    const kindName = isKeywordKind(kind) ? "keyword" : "token";
    const base = `unexpected ${TOKEN_NAMES[kind]} ${kindName}`;
    this.error(this.loc(this.pos), note === "" ? base : `${base}: ${note}`);
  }

  private enter(): boolean {
    if (++this.depth <= MAX_NESTING) return true;
    this.depth--;
    this.error(this.loc(this.pos), "max parsing recursion depth exceeded");
    return false;
  }

  /** Skips to the next line that starts a statement at column 1, at or after the failure. */
  private recover(statementStart: number): void {
    let index = this.pos > statementStart ? this.pos : statementStart + 1;
    const last = this.ts.count - 1;
    while (index < last && !this.isStatementStart(index)) index++;
    this.pos = Math.min(index, last);
    this.identAt = -1;
    this.recordScanErrors(this.pos);
  }

  private isStatementStart(index: number): boolean {
    if (!this.hasNewlineBefore(index) || this.tokens[index * TOKEN_STRIDE + COL] !== 1) return false;
    const kind = this.kindAt(index);
    return kind === Tok.Ident || kind === Tok.Package || kind === Tok.Import || kind === Tok.Default;
  }

  private allErrors(): RegoError[] {
    const all = this.errors.concat(this.checks, this.regoV1Rules ? this.v1Checks : []);
    // Stable: errors at the same position keep the order in which they were found.
    all.sort((a, b) => a.loc.offset - b.loc.offset);
    return all.map((problem) => this.newError(problem.loc, problem.detail));
  }

  // -------------------------------------------------------------------------------------------
  // Statements

  private parseStatement(): Statement | undefined {
    const kind = this.tok();
    if (kind === Tok.Package && !this.startsRef(this.pos)) {
      const pkg = this.parsePackage();
      return pkg && { kind: "package", pkg };
    }
    if (kind === Tok.Import && !this.startsRef(this.pos)) {
      const imp = this.parseImport();
      return imp && { kind: "import", imp };
    }
    const saved = this.save();
    const loc = this.loc(this.pos);
    const rules = this.parseRules();
    if (rules !== undefined) return { kind: "rules", rules, loc };
    if (this.errors.length > saved.errors) return undefined;
    // Not a rule with a body: like OPA, read the statement as an expression and make it a rule
    // (`p := 1`, `f(x) = y`, `a.b[c] := d`).
    this.restore(saved);
    const body = this.parseQueryBody(true, Tok.EOF);
    if (body === undefined) return undefined;
    const rule = this.ruleFromBody(body);
    return { kind: "rules", rules: rule === undefined ? [] : [rule], loc };
  }

  private assembleModule(
    statements: Statement[],
    firstStatementIsPackage: boolean,
    withAnnotations: boolean,
  ): Module | undefined {
    const first = statements[0];
    if (first === undefined) {
      if (this.errors.length === 0)
        this.error({ file: this.file, line: 1, col: 1, offset: 0 }, "empty module");
      return undefined;
    }
    let pkg: Package | undefined;
    const imports: Import[] = [];
    const rules: Rule[] = [];
    statements.forEach((statement, index) => {
      if (statement.kind === "package") {
        if (index === 0) pkg = statement.pkg;
        else this.check(statement.pkg.loc, "unexpected package");
      } else if (index === 0) {
        if (!firstStatementIsPackage) this.check(statementLoc(statement), "package expected");
      } else if (statement.kind === "import") {
        imports.push(statement.imp);
      } else {
        rules.push(...statement.rules);
      }
    });
    if (pkg === undefined) return undefined;
    const module: Module = {
      file: this.file,
      package: pkg,
      imports,
      rules,
      comments: this.ts.comments,
      annotations: [],
    };
    if (!this.regoV1Rules) module.regoVersion = 0;
    if (!withAnnotations) return module;
    const annotatable = statements.map((statement) => ({
      target: annotationTarget(statement),
      loc: statementLoc(statement),
    }));
    const { annotations, errors } = parseAnnotations(this.ts.comments, annotatable);
    for (const error of errors) this.error(error.location ?? this.loc(0), error.detail);
    module.annotations = annotations;
    return module;
  }

  private parsePackage(): Package | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    if (!this.isName() && !isKeywordKind(this.tok())) {
      this.illegal("");
      return undefined;
    }
    this.identAt = this.pos;
    const start = this.errors.length;
    const term = this.parseTerm();
    let path: string[] | undefined;
    if (term !== undefined) {
      path = this.packagePath(term);
      if (path === undefined) return undefined;
    }
    if (path === undefined) {
      if (this.errors.length === start) this.error(this.loc(this.pos), "expected path");
      return undefined;
    }
    return { path, loc };
  }

  private packagePath(term: Term): string[] | undefined {
    if (term.type === "var") return [term.name];
    if (term.type !== "ref") {
      this.illegal("");
      return undefined;
    }
    if (term.head.type !== "var") {
      this.error(term.head.loc, `unexpected ${valueName(term.head)} token: expecting var`);
      return undefined;
    }
    const path = [term.head.name];
    for (const element of term.path) {
      if (element.type !== "string") {
        this.error(element.loc, `unexpected ${valueName(element)} token: expecting string`);
        return undefined;
      }
      path.push(element.value);
    }
    return path;
  }

  private parseImport(): Import | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    if (!this.isName() && !isKeywordKind(this.tok())) {
      this.illegal("");
      return undefined;
    }
    this.identAt = this.pos;
    const term = this.parseTerm();
    if (term?.type === "ref" && !this.checkImportElements(term)) return undefined;
    const path = term?.type === "var" || term?.type === "ref" ? term : undefined;
    if (path === undefined) {
      this.error(this.loc(this.pos), "expected path");
      return undefined;
    }
    const root = path.type === "var" ? path : path.head;
    const rootName = root.type === "var" ? root.name : "";
    if (!IMPORT_ROOTS.has(rootName)) {
      this.error(
        path.loc,
        `unexpected import path, must begin with one of: {data, future, input, rego}, got: ${printTerm(root)} (hint: if this is unexpected, try updating OPA)`,
      );
      return undefined;
    }
    let alias: string | undefined;
    if (this.tok() === Tok.As) {
      alias = this.parseImportAlias();
      if (alias === undefined) return undefined;
    } else {
      this.checkImportTail(path, rootName);
    }
    const imp: Import = { path, alias, loc };
    this.checkSpecialImport(imp, rootName);
    return imp;
  }

  /** Import paths are names only: `data.a["b"]`, not `data.a[x]`. */
  private checkImportElements(path: RefTerm): boolean {
    for (const element of path.path) {
      if (element.type !== "string") {
        this.error(element.loc, `unexpected ${valueName(element)} token: expecting string`);
        return false;
      }
    }
    return true;
  }

  private parseImportAlias(): string | undefined {
    this.advance();
    if (this.tok() !== Tok.Ident) {
      this.illegal("expected var");
      return undefined;
    }
    const alias = this.parseTerm();
    if (alias?.type !== "var") {
      this.illegal("expected var");
      return undefined;
    }
    return alias.name;
  }

  private checkImportTail(path: VarTerm | RefTerm, rootName: string): void {
    let last: Term | undefined;
    if (path.type === "var") last = path;
    else if (rootName !== "future") last = path.path[path.path.length - 1];
    const name = last?.type === "var" ? last.name : last?.type === "string" ? last.value : undefined;
    if (last !== undefined && name !== undefined && isKeyword(name, this.version)) {
      this.error(last.loc, `unexpected import path, must not end with a keyword, got: ${name}`);
    }
  }

  /**
   * OPA's checks of `future.keywords…` and `rego.v1` imports. In Rego v1 they change nothing
   * (but the extensions `not`, `and`, `or`); in Rego v0 they enable keywords, and `rego.v1`
   * makes the module follow v1's rules.
   */
  private checkSpecialImport(imp: Import, rootName: string): void {
    const path = imp.path.type === "ref" ? imp.path.path : [];
    const second = path[0]?.type === "string" ? path[0].value : undefined;
    if (rootName === "rego") {
      if (second === "v2" && path.length === 1) {
        // Rego v2 preview: negated bodies (`not { … }`) become available.
        this.notBodies = true;
      } else if (second !== "v1" || path.length > 1) {
        this.error(imp.path.loc, `invalid import \`${printTerm(imp.path)}\`, must be \`rego.v1\``);
      } else if (this.version === 0) {
        if (imp.alias !== undefined) {
          this.error(imp.path.loc, "`rego` imports cannot be aliased");
          return;
        }
        this.regoV1Rules = true;
        for (const keyword of FUTURE_KEYWORDS_V0.keys()) this.enableFutureKeyword(keyword);
      }
    } else if (rootName === "future") {
      if (second !== "keywords") {
        this.error(imp.path.loc, "invalid import, must be `future.keywords`");
      } else if (imp.alias !== undefined) {
        this.error(imp.path.loc, "`future` imports cannot be aliased");
      } else if (path.length === 1) {
        for (const keyword of FUTURE_KEYWORDS_V0.keys()) this.enableFutureKeyword(keyword);
        this.enableFutureKeyword("not");
        this.enableFutureKeyword("and");
        this.enableFutureKeyword("or");
      } else if (path.length === 2) {
        const keyword = path[1]?.type === "string" ? path[1].value : "";
        if (!FUTURE_KEYWORDS.includes(keyword)) {
          this.error(imp.path.loc, `unexpected keyword, must be one of [${FUTURE_KEYWORDS.join(" ")}]`);
        } else {
          this.enableFutureKeyword(keyword);
        }
      }
    }
  }

  private enableFutureKeyword(keyword: string): void {
    const kind = FUTURE_KEYWORDS_V0.get(keyword);
    if (kind !== undefined) this.kinds[kind] = kind;
    else if (keyword === "not") this.notBodies = true;
    else if (keyword === "and") this.andKeyword = true;
    else if (keyword === "or") this.orKeyword = true;
  }

  // -------------------------------------------------------------------------------------------
  // Rules

  /**
   * OPA's `parseRules`: a rule with a body (`p if …`, `p contains x`, `default p := 1`), plus
   * further bodies chained to it. Returns undefined without an error when the statement is not
   * such a rule (`p := 1` without a body); the caller then reads it as an expression.
   */
  private parseRules(): Rule[] | undefined {
    const ruleStart = this.pos;
    if (this.keywordStartsRef(this.pos)) this.identAt = this.pos;
    let isDefault = false;
    if (this.tok() === Tok.Default && this.identAt !== this.pos) {
      isDefault = true;
      this.advance();
      if (this.keywordStartsRef(this.pos)) this.identAt = this.pos;
    }
    if (!this.isName()) return undefined;
    const ruleLoc = this.loc(ruleStart);
    const parsed = this.parseHead(isDefault);
    if (parsed === undefined) return undefined;
    if (isDefault) {
      const rule = this.finishDefaultRule(parsed, ruleLoc);
      return rule && [rule];
    }
    return this.parseRuleBodies(parsed, ruleLoc);
  }

  private parseHead(isDefault: boolean): ParsedHead | undefined {
    const headLoc = this.loc(this.pos);
    const headTerm = this.parseHeadTerm();
    if (headTerm === undefined) return undefined;
    let ref: VarTerm | RefTerm;
    let args: Term[] | undefined;
    if (headTerm.type === "var" || headTerm.type === "ref") {
      ref = headTerm;
    } else if (headTerm.type === "call") {
      if (headTerm.op.type === "ref" && headTerm.op.head.type !== "var") {
        this.illegal(`rule head ref ${printTerm(headTerm.op)} invalid`);
        return undefined;
      }
      ref = headTerm.op;
      args = headTerm.args;
    } else {
      return undefined;
    }
    const refLength = ref.type === "var" ? 1 : ref.path.length + 1;
    const head: RuleHead = { ref, args, key: undefined, value: undefined, assign: false, loc: headLoc };
    const parsed: ParsedHead = { head, usesContains: false, implicitValue: false, refLength };
    if (!this.parseHeadValue(parsed, isDefault)) return undefined;
    if (head.value === undefined && head.key === undefined) {
      parsed.implicitValue = refLength !== 2 || (args !== undefined && args.length > 0);
    }
    return parsed;
  }

  /** OPA's `parseHeadFinish`: the rule name and any ref or call that follows it. */
  private parseHeadTerm(): Term | undefined {
    const name = this.parseVar();
    const kind = this.tok();
    if (!this.hasSpaceBefore(this.pos) && isArithmeticOrRelation(kind)) this.illegal("");
    if (kind !== Tok.LParen && kind !== Tok.Dot && kind !== Tok.LBrack) return name;
    const ref = this.parseRef(name, true);
    if (ref === undefined) this.illegal("expected rule head name");
    return ref;
  }

  /** Parses `contains key`, `= value` or `:= value` after the head; false on failure. */
  private parseHeadValue(parsed: ParsedHead, isDefault: boolean): boolean {
    const head = parsed.head;
    const name = printTerm(head.ref);
    switch (this.tok()) {
      case Tok.Contains:
        if (head.args !== undefined) {
          this.illegal(
            `the contains keyword can only be used with multi-value rule definitions (e.g., ${name} contains <VALUE> { ... })`,
          );
        }
        this.advance();
        head.key = this.parseTermIn(true);
        parsed.usesContains = true;
        if (head.key === undefined) {
          this.illegal(`expected rule key term (e.g., ${name} contains <VALUE> { ... })`);
          return false;
        }
        return true;
      case Tok.Unify:
        this.advance();
        head.value = this.parseTermIn(true);
        if (head.value === undefined) {
          this.illegal(`expected rule value term (e.g., ${name}[<nil>] = <VALUE> { ... })`);
          return false;
        }
        return true;
      case Tok.Assign:
        this.advance();
        head.assign = true;
        head.value = this.parseTermIn(true);
        if (head.value === undefined) {
          this.illegal(missingAssignedValue(name, head, isDefault));
          return false;
        }
        return true;
      default:
        return true;
    }
  }

  private finishDefaultRule(parsed: ParsedHead, loc: Location): Rule | undefined {
    const head = parsed.head;
    if (head.value === undefined && !parsed.implicitValue) {
      this.error(loc, "illegal default rule (must have a value)");
      return undefined;
    }
    const before = this.errors.length;
    if (head.value !== undefined) {
      for (const kind of nonConstantParts(head.value)) {
        this.error(loc, `illegal default rule (value cannot contain ${kind})`);
      }
    }
    if (head.args !== undefined && head.args.length > 0) this.checkDefaultArgs(head.args, loc);
    if (this.errors.length > before) return undefined;
    return { default: true, head, body: [], else: undefined, loc };
  }

  private checkDefaultArgs(args: Term[], loc: Location): void {
    const seen = new Set<string>();
    for (const arg of args) {
      if (arg.type !== "var") {
        this.error(loc, `illegal default rule (arguments cannot contain ${valueName(arg)})`);
      } else if (arg.name !== "_" && seen.has(arg.name)) {
        this.error(loc, `illegal default rule (arguments cannot be repeated ${arg.name})`);
      } else {
        seen.add(arg.name);
      }
    }
  }

  /** The body (or bodies) and `else` chain of a non-default rule. */
  private parseRuleBodies(parsed: ParsedHead, loc: Location): Rule[] | undefined {
    const { head, usesContains, refLength } = parsed;
    const hasIf = this.tok() === Tok.If;
    const noArgs = head.args === undefined || head.args.length === 0;
    // Without `if`, OPA reads `p[x] { … }` the v0 way, as the partial set rule
    // `p contains x if { … }` (which Rego v1's rules then reject).
    const legacyKey = !hasIf && !usesContains && noArgs && refLength === 2;
    const legacyMultiValue = legacyKey && head.value === undefined;
    if (legacyMultiValue && head.ref.type === "ref" && head.ref.head.type === "var") {
      head.key = head.ref.path[0];
      head.ref = head.ref.head;
    }
    let body: Body | undefined;
    if (hasIf) {
      body = this.parseIfBody();
    } else if (this.tok() === Tok.LBrace) {
      body = this.parseBracedBody();
    } else if (usesContains) {
      return [{ default: false, head, body: [], else: undefined, loc }];
    } else {
      return undefined;
    }
    if (body === undefined) return undefined;
    const rule: Rule = { default: false, head, body, else: undefined, loc };
    this.checkRuleKeywords(rule, hasIf, legacyMultiValue);
    if (this.tok() === Tok.Else && !this.startsRef(this.pos)) {
      if (!this.checkElseAllowed(head, refLength, usesContains || legacyKey)) return undefined;
      rule.else = this.parseElse(head);
      if (rule.else === undefined) return undefined;
    }
    return this.parseChainedBodies(rule, hasIf, legacyMultiValue);
  }

  /** After `if`: a single literal (`p if x > 1`) or a braced body (`p if { … }`). */
  private parseIfBody(): Body | undefined {
    this.advance();
    const saved = this.save();
    const expr = this.parseLiteral();
    // `p if { true }` reads as a set literal; a set is never false, so OPA takes it as a body.
    // `p if not {x}` is an expression (what `opa fmt` writes for `p if { not {x} }`).
    if (expr !== undefined && (expr.negated || expr.node.type !== "set")) return [expr];
    this.restore(saved);
    return this.parseBracedBody();
  }

  /** `{ body }`: consumes the braces (OPA steps over the first token whatever it is). */
  private parseBracedBody(): Body | undefined {
    this.advance();
    const body = this.parseBody(Tok.RBrace);
    if (body === undefined) return undefined;
    this.advance();
    return body;
  }

  private checkRuleKeywords(rule: Rule, hasIf: boolean, legacyMultiValue: boolean): void {
    const kind = rule.head.args !== undefined && rule.head.args.length > 0 ? "function" : "rule";
    if (!hasIf) this.checkV1(rule.loc, `\`if\` keyword is required before ${kind} body`);
    if (legacyMultiValue) this.checkV1(rule.loc, "`contains` keyword is required for partial set rules");
  }

  private checkElseAllowed(head: RuleHead, refLength: number, hasKey: boolean): boolean {
    if (refLength > 1 && head.ref.type === "ref" && !head.ref.path.every(isGround)) {
      this.error(this.loc(this.pos), "else keyword cannot be used on rules with variables in head");
      return false;
    }
    if (hasKey) {
      this.error(this.loc(this.pos), "else keyword cannot be used on multi-value rules");
      return false;
    }
    return true;
  }

  private parseElse(head: RuleHead): Rule | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    let value: Term | undefined;
    let assign = false;
    const kind = this.tok();
    if (kind === Tok.Assign || kind === Tok.Unify) {
      assign = kind === Tok.Assign;
      this.advance();
      value = this.parseTermIn(true);
      if (value === undefined) return undefined;
    } else if (kind !== Tok.LBrace && kind !== Tok.If) {
      this.illegal("expected else value term or rule body");
      return undefined;
    }
    const elseHead: RuleHead = {
      ref: structuredClone(head.ref),
      args: head.args && structuredClone(head.args),
      key: undefined,
      value,
      assign,
      loc,
    };
    const rule: Rule = { default: false, head: elseHead, body: [], else: undefined, loc };
    const hasIf = this.tok() === Tok.If;
    if (!hasIf && this.tok() !== Tok.LBrace) return rule;
    const body = this.parseElseBody(hasIf);
    if (body === undefined) return undefined;
    rule.body = body;
    this.checkRuleKeywords(rule, hasIf, false);
    if (this.tok() === Tok.Else) {
      rule.else = this.parseElse(head);
      if (rule.else === undefined) return undefined;
    }
    return rule;
  }

  private parseElseBody(hasIf: boolean): Body | undefined {
    if (hasIf) this.advance();
    if (this.tok() === Tok.LBrace) return this.parseBracedBody();
    if (this.tok() === Tok.EOF) {
      this.illegal("rule body expected");
      return undefined;
    }
    const expr = this.parseLiteral();
    return expr && [expr];
  }

  /** `p if { a } { b }` defines `p` twice; each extra body is a rule with a copy of the head. */
  private parseChainedBodies(rule: Rule, hasIf: boolean, legacyMultiValue: boolean): Rule[] | undefined {
    const rules = [rule];
    while (this.tok() === Tok.LBrace) {
      const loc = this.loc(this.pos);
      if (rule.else !== undefined) {
        this.error(loc, "expected else keyword");
        return undefined;
      }
      const body = this.parseBracedBody();
      if (body === undefined) return undefined;
      const head: RuleHead = { ...structuredClone(rule.head), loc };
      const next: Rule = { default: false, head, body, else: undefined, loc };
      this.checkRuleKeywords(next, hasIf, legacyMultiValue);
      rules.push(next);
    }
    return rules;
  }

  /** OPA's `ParseRuleFromBody`: a statement such as `p := 1` or `f(x) = y` read as a rule. */
  private ruleFromBody(body: Body): Rule | undefined {
    const expr = body[0]!;
    const node = expr.node;
    const problem = bodyRuleProblem(body);
    if (
      problem !== undefined ||
      node.type === "some" ||
      node.type === "every" ||
      node.type === "body" ||
      node.type === "logical"
    ) {
      this.check(expr.loc, problem ?? "expression cannot be used for rule head");
      return undefined;
    }
    if (node.type !== "call") return this.ruleFromTerm(node, expr.loc);
    const name = operatorName(node.op);
    if ((name === "eq" || name === "assign") && node.args.length === 2) {
      return this.ruleFromEquality(node.args[0]!, node.args[1]!, name === "assign", expr.loc);
    }
    if (name !== undefined && OPERATOR_BUILTINS.has(name)) {
      this.check(expr.loc, "rule name conflicts with built-in function");
      return undefined;
    }
    return this.ruleFromCall(node, expr.loc);
  }

  /**
   * A bare term statement (OPA's `ParsePartialSetDocRuleFromTerm` and
   * `ParseCompleteDocRuleWithDotsFromTerm`): `p[x]` is `p contains x` and `a.b.c` is
   * `a.b.c := true`, which only Rego v0's rules accept; `p` is no rule at all.
   */
  private ruleFromTerm(term: Term, loc: Location): Rule | undefined {
    if (term.type === "var" && ROOT_DOCUMENTS.has(term.name)) {
      this.check(loc, "refs cannot be used for rule head");
      return undefined;
    }
    if (term.type !== "ref") {
      this.check(loc, `${valueName(term)} cannot be used for rule name`);
      return undefined;
    }
    if (term.head.type !== "var") {
      this.check(loc, `invalid rule head: ${printTerm(term)}`);
      return undefined;
    }
    const head: RuleHead = {
      ref: term,
      args: undefined,
      key: undefined,
      value: undefined,
      assign: false,
      loc,
    };
    if (term.path.length > 1) {
      this.checkV1(loc, "rule must have value assignment and/or body declaration");
      // OPA's generated value: the v1 spelling is `a.b.c = true`.
      head.value = { type: "boolean", value: true, loc: term.loc };
    } else {
      this.checkV1(loc, "`contains` keyword is required for partial set rules");
      head.ref = term.head;
      head.key = term.path[0];
    }
    return { default: false, head, body: [], else: undefined, loc };
  }

  private ruleFromEquality(lhs: Term, value: Term, assign: boolean, loc: Location): Rule | undefined {
    let ref: VarTerm | RefTerm;
    let args: Term[] | undefined;
    if (lhs.type === "call" && (lhs.op.type === "var" || lhs.op.head.type === "var")) {
      ref = lhs.op;
      args = lhs.args;
    } else if (lhs.type === "var" || (lhs.type === "ref" && lhs.head.type === "var")) {
      ref = lhs;
    } else if (lhs.type === "ref") {
      this.check(loc, `invalid rule head: ${printTerm(lhs)}`);
      return undefined;
    } else {
      this.check(loc, `${valueName(lhs)} cannot be used for rule name`);
      return undefined;
    }
    const head: RuleHead = { ref, args, key: undefined, value, assign, loc };
    this.checkRuleName(ref, loc);
    return { default: false, head, body: [], else: undefined, loc };
  }

  /** Rego v1 keywords can name a rule only in Rego v0 (`contains(s, x) = …`, `if := 1`). */
  private checkRuleName(ref: VarTerm | RefTerm, loc: Location): void {
    if (ref.type === "var" && isKeyword(ref.name)) {
      this.checkV1(loc, `${ref.name} keyword cannot be used for rule name`);
    }
  }

  private ruleFromCall(call: CallTerm, loc: Location): Rule | undefined {
    if (call.args.length === 0) {
      this.check(loc, "rule argument list must take at least one argument");
      return undefined;
    }
    if (call.op.type === "ref" && call.op.head.type !== "var") {
      this.check(loc, `invalid rule head: ${printTerm(call.op)}`);
      return undefined;
    }
    const head: RuleHead = {
      ref: call.op,
      args: call.args,
      key: undefined,
      value: undefined,
      assign: false,
      loc,
    };
    this.checkRuleName(call.op, loc);
    return { default: false, head, body: [], else: undefined, loc };
  }

  // -------------------------------------------------------------------------------------------
  // Bodies and expressions

  private parseBody(end: number): Body | undefined {
    if (!this.enter()) return undefined;
    const body = this.parseQueryBody(false, end);
    this.depth--;
    return body;
  }

  /**
   * OPA's `parseQuery`: expressions separated by `;` or newlines up to (not including) `end`.
   * With `requireSemi` (top-level statements) it stops after one expression unless `;` follows.
   */
  private parseQueryBody(requireSemi: boolean, end: number): Body | undefined {
    if (this.tok() === end) {
      this.error(this.loc(this.pos), "found empty body");
      return undefined;
    }
    const body: Body = [];
    for (;;) {
      const expr = this.parseLiteral();
      if (expr === undefined) return undefined;
      body.push(expr);
      if (this.tok() === Tok.Semicolon) {
        this.advance();
        continue;
      }
      if (this.tok() === end || requireSemi) return body;
      if (!this.hasNewlineBefore(this.pos)) {
        if (this.errors.length === this.statementErrorBase) {
          this.illegal(`expected \\n or ; or ${TOKEN_NAMES[end]}`);
        }
        return undefined;
      }
    }
  }

  /**
   * One expression of a body. With the `and` / `or` future keywords, an expression may be a
   * chain of operands joined by them (OPA's `parseLiteral` with `parseLogicalOrChain`).
   */
  private parseLiteral(): Expr | undefined {
    if (!this.andKeyword && !this.orKeyword) return this.parseSimpleLiteral();
    const start = this.pos;
    const first = this.parseLogicalOperand(true);
    if (first === undefined) return undefined;
    if (this.logicalOperator() === undefined) {
      if (first.explicit) {
        // `{ … }` not followed by and/or: an ordinary term expression (a set or object).
        this.restore(first.saved);
        return this.parseSimpleLiteral();
      }
      return first.body[0];
    }
    if (first.withAt !== undefined) {
      this.error(
        first.withAt,
        `\`with\` modifier is not allowed on operand of \`${this.logicalOperator()}\``,
      );
      return undefined;
    }
    const chain = this.parseLogicalOr(first.body, this.loc(start));
    if (chain === undefined) return undefined;
    // `a or b with x as y`: the modifiers govern the whole chain, as in OPA.
    const last = rightmostOperand(chain);
    if (last !== chain && last.with.length > 0) {
      chain.with = last.with;
      last.with = [];
    }
    return this.parseWithModifiers(chain);
  }

  /** `and` or `or` at the current position when that future keyword is enabled. */
  private logicalOperator(): "and" | "or" | undefined {
    if (this.tok() !== Tok.Ident) return undefined;
    const text = this.text(this.pos);
    if (text === "and" && this.andKeyword) return "and";
    if (text === "or" && this.orKeyword) return "or";
    return undefined;
  }

  /** `lhs or …`: `and` binds tighter, both fold to the left. */
  private parseLogicalOr(lhs: Body, loc: Location): Expr | undefined {
    if (!this.enter()) return undefined;
    try {
      if (this.logicalOperator() === "and") {
        const and = this.parseLogicalAnd(lhs, loc);
        if (and === undefined) return undefined;
        lhs = [and];
      }
      while (this.logicalOperator() === "or") {
        this.advance();
        const rhs = this.parseLogicalOperand(false);
        if (rhs === undefined) return undefined;
        let rhsBody = rhs.body;
        if (this.logicalOperator() === "and") {
          const and = this.parseLogicalAnd(rhsBody, rhsBody[0]!.loc);
          if (and === undefined) return undefined;
          rhsBody = [and];
        }
        lhs = [
          { negated: false, node: { type: "logical", op: "or", lhs, rhs: rhsBody, loc }, with: [], loc },
        ];
      }
      return lhs[0];
    } finally {
      this.depth--;
    }
  }

  private parseLogicalAnd(lhs: Body, loc: Location): Expr | undefined {
    while (this.logicalOperator() === "and") {
      this.advance();
      const rhs = this.parseLogicalOperand(false);
      if (rhs === undefined) return undefined;
      lhs = [
        { negated: false, node: { type: "logical", op: "and", lhs, rhs: rhs.body, loc }, with: [], loc },
      ];
    }
    return lhs[0];
  }

  /**
   * One operand of `and` / `or`: a braced body (`{ a; b }`), a negated body (`not { … }`), a
   * parenthesized chain (`(a or b)`), or an ordinary expression. `first` is the chain's first
   * operand, which may turn out not to be in a chain at all.
   */
  private parseLogicalOperand(
    first: boolean,
  ): { body: Body; explicit: boolean; saved: SavedState; withAt: Location | undefined } | undefined {
    const saved = this.save();
    if (this.tok() === Tok.LBrace) {
      this.advance();
      const body = this.parseBody(Tok.RBrace);
      if (body !== undefined) {
        this.advance();
        return { body, explicit: true, saved, withAt: undefined };
      }
      if (!first) return undefined;
      this.restore(saved);
      const expr = this.parseSimpleLiteral();
      return expr && { body: [expr], explicit: false, saved, withAt: undefined };
    }
    if (this.tok() === Tok.LParen) {
      const group = this.parseLogicalGroup();
      if (group !== undefined) return { body: [group], explicit: false, saved, withAt: undefined };
      this.restore(saved);
    }
    const expr = this.parseSimpleLiteral();
    if (expr === undefined) return undefined;
    const withAt = expr.with.length > 0 ? expr.with[0]!.loc : undefined;
    return { body: [expr], explicit: false, saved, withAt };
  }

  /** `( operand and/or … )`; undefined (to be re-read as a term) when no operator is inside. */
  private parseLogicalGroup(): Expr | undefined {
    const saved = this.save();
    const loc = this.loc(this.pos);
    this.advance();
    const lhs = this.parseLogicalOperand(false);
    if (lhs === undefined || this.logicalOperator() === undefined) {
      this.restore(saved);
      return undefined;
    }
    const chain = this.parseLogicalOr(lhs.body, loc);
    if (chain === undefined || this.tok() !== Tok.RParen) {
      if (chain !== undefined) this.error(this.loc(this.pos), "expected ) to close parenthesized group");
      return undefined;
    }
    this.advance();
    return chain;
  }

  private parseSimpleLiteral(): Expr | undefined {
    const start = this.pos;
    if (this.keywordStartsRef(start)) {
      this.identAt = start;
      return this.parseLiteralExpr(false, start);
    }
    let negated = false;
    if (this.tok() === Tok.Not) {
      this.advance();
      negated = true;
    }
    switch (this.tok()) {
      case Tok.Some:
        if (negated) {
          this.illegal("illegal negation of 'some'");
          return undefined;
        }
        return this.parseSome();
      case Tok.Every:
        if (negated) {
          this.illegal("illegal negation of 'every'");
          return undefined;
        }
        return this.parseEvery();
      case Tok.LBrace:
        if (negated && this.notBodies) {
          const loc = this.loc(start);
          const body = this.parseBracedBody();
          if (body === undefined) return undefined;
          return this.parseWithModifiers({ negated: true, node: { type: "body", body, loc }, with: [], loc });
        }
        return this.parseLiteralExpr(negated, start);
      case Tok.LParen:
        if (negated && this.notBodies && (this.andKeyword || this.orKeyword)) {
          // `not (a or b)`: the parenthesized chain is the negated body.
          const group = this.parseLogicalGroup();
          if (group !== undefined) {
            const loc = this.loc(start);
            return this.parseWithModifiers({
              negated: true,
              node: { type: "body", body: [group], loc },
              with: [],
              loc,
            });
          }
        }
        return this.parseLiteralExpr(negated, start);
      default:
        return this.parseLiteralExpr(negated, start);
    }
  }

  private parseLiteralExpr(negated: boolean, start: number): Expr | undefined {
    const node = this.parseExpr();
    if (node === undefined) return undefined;
    const expr: Expr = { negated, node, with: [], loc: this.loc(start) };
    return this.parseWithModifiers(expr);
  }

  private parseWithModifiers(expr: Expr): Expr | undefined {
    if (this.tok() !== Tok.With) return expr;
    const withs = this.parseWith();
    if (withs === undefined) return undefined;
    expr.with = withs;
    return expr;
  }

  /** `lhs`, or `lhs := rhs` / `lhs = rhs` (OPA's `parseExpr`). */
  private parseExpr(): Term | undefined {
    const lhs = this.parseTermIn(true);
    if (lhs === undefined) return undefined;
    const kind = this.tok();
    if (kind !== Tok.Assign && kind !== Tok.Unify) return lhs;
    const op = this.operatorVar(this.pos);
    this.advance();
    const rhs = this.parseTermIn(true);
    if (rhs === undefined) return undefined;
    return { type: "call", op, args: [lhs, rhs], loc: lhs.loc };
  }

  private parseWith(): With[] | undefined {
    const withs: With[] = [];
    do {
      const loc = this.loc(this.pos);
      this.advance();
      if (this.tok() !== Tok.Ident) {
        this.illegal("expected ident");
        return undefined;
      }
      const target = this.parseTerm();
      if (target === undefined) return undefined;
      const path = target.type === "var" || target.type === "ref" ? target : undefined;
      if (path === undefined) this.illegal("expected with target path");
      if (this.tok() !== Tok.As) {
        this.illegal("expected as keyword");
        return undefined;
      }
      this.advance();
      const value = this.parseTermIn(true);
      if (value === undefined) return undefined;
      if (path !== undefined) withs.push({ target: path, value, loc });
    } while (this.tok() === Tok.With);
    return withs;
  }

  private parseSome(): Expr | undefined {
    const loc = this.loc(this.pos);
    const saved = this.save();
    this.advance();
    const term = this.parseTermIn(true);
    if (term?.type === "call") {
      const name = operatorName(term.op);
      if (name !== MEMBER_2 && name !== MEMBER_3) {
        this.illegal("expected `x in xs` or `x, y in xs` expression");
        return undefined;
      }
      const decl: SomeDecl = { type: "some", symbols: [term], loc };
      return this.parseWithModifiers({ negated: false, node: decl, with: [], loc });
    }
    this.restore(saved);
    const symbols: Term[] = [];
    do {
      this.advance();
      if (this.tok() !== Tok.Ident) {
        this.illegal("expected var");
        return undefined;
      }
      symbols.push(this.parseVar());
    } while (this.tok() === Tok.Comma);
    const decl: SomeDecl = { type: "some", symbols, loc };
    return { negated: false, node: decl, with: [], loc };
  }

  private parseEvery(): Expr | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    const term = this.parseTermIn(true);
    if (term === undefined) return undefined;
    const parts = this.everyParts(term);
    if (parts === undefined) return undefined;
    if (this.tok() !== Tok.LBrace) {
      this.illegal("missing body");
      return undefined;
    }
    const body = this.parseBracedBody();
    if (body === undefined) return undefined;
    const every: Every = { type: "every", ...parts, body, loc };
    return this.parseWithModifiers({ negated: false, node: every, with: [], loc });
  }

  private everyParts(term: Term): { key: Term | undefined; value: Term; domain: Term } | undefined {
    const name = term.type === "call" ? operatorName(term.op) : undefined;
    if (term.type !== "call" || (name !== MEMBER_2 && name !== MEMBER_3)) {
      this.illegal("expected `x[, y] in xs { ... }` expression");
      return undefined;
    }
    const [first, second, third] = term.args;
    const key = name === MEMBER_3 ? first : undefined;
    const value = name === MEMBER_3 ? second : first;
    const domain = name === MEMBER_3 ? third : second;
    if (value === undefined || domain === undefined) {
      this.illegal("illegal domain");
      return undefined;
    }
    if (key !== undefined && key.type !== "var") {
      this.illegal("expected key to be a variable");
      return undefined;
    }
    if (value.type !== "var") {
      this.illegal("expected value to be a variable");
      return undefined;
    }
    return { key, value, domain };
  }

  // -------------------------------------------------------------------------------------------
  // Infix terms

  /**
   * OPA's `parseTermIn`, the loosest binary level: `x in xs` and, where `keyValue` allows it
   * (expressions, parentheses, brackets; not list elements), `k, v in xs`. `first` is an
   * already-parsed leading term.
   */
  private parseTermIn(keyValue: boolean, first?: Term): Term | undefined {
    let lhs = this.parseBinary(2, first);
    if (lhs === undefined) return undefined;
    if (keyValue && this.tok() === Tok.Comma) lhs = this.parseKeyValueIn(lhs);
    while (this.tok() === Tok.In && !this.startsRef(this.pos)) {
      const op = this.memberOperator(this.pos, MEMBER_2);
      this.advance();
      const rhs = this.parseBinary(2);
      if (rhs === undefined) break;
      lhs = { type: "call", op, args: [lhs, rhs], loc: lhs.loc };
    }
    return lhs;
  }

  /** `key, value in domain` after `key`; backs up to the comma when it is not that form. */
  private parseKeyValueIn(key: Term): Term {
    const saved = this.save();
    this.advance();
    const value = this.parseBinary(2);
    if (value !== undefined && this.tok() === Tok.In && !this.startsRef(this.pos)) {
      const op = this.memberOperator(this.pos, MEMBER_3);
      this.advance();
      const domain = this.parseBinary(2);
      if (domain !== undefined) return { type: "call", op, args: [key, value, domain], loc: key.loc };
    }
    this.restore(saved);
    return key;
  }

  /**
   * OPA's relation → `|` → `&` → `+ -` → `* / %` chain as precedence climbing; all levels are
   * left-associative. A missing right operand leaves the left one, as in OPA, and then only
   * looser operators are considered.
   */
  private parseBinary(minLevel: number, first?: Term): Term | undefined {
    let lhs = first ?? this.parseTerm();
    if (lhs === undefined) return undefined;
    let maxLevel = 6;
    for (;;) {
      const level = binaryLevel(this.tok());
      if (level < minLevel || level > maxLevel) return lhs;
      const op = this.operatorVar(this.pos);
      this.advance();
      const rhs = this.parseBinary(level + 1);
      if (rhs === undefined) {
        maxLevel = level - 1;
        continue;
      }
      lhs = { type: "call", op, args: [lhs, rhs], loc: lhs.loc };
    }
  }

  private operatorVar(index: number): VarTerm {
    return { type: "var", name: TOKEN_NAMES[this.kindAt(index)]!, loc: this.loc(index) };
  }

  private memberOperator(index: number, name: typeof MEMBER_2 | typeof MEMBER_3): RefTerm {
    const loc = this.loc(index);
    const member = name === MEMBER_2 ? "member_2" : "member_3";
    return {
      type: "ref",
      head: { type: "var", name: "internal", loc },
      path: [{ type: "string", value: member, loc: { ...loc } }],
      loc: { ...loc },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Terms

  /** OPA's `parseTerm`: one operand, including any ref or call suffix (`a.b[c]`, `f(x).y`). */
  private parseTerm(): Term | undefined {
    if (!this.enter()) return undefined;
    const primary = this.parsePrimary();
    const term = primary === undefined ? undefined : this.parseTermSuffix(primary);
    this.depth--;
    return term;
  }

  private parseTermSuffix(term: Term): Term | undefined {
    const kind = this.tok();
    if ((kind === Tok.Dot || kind === Tok.LBrack || kind === Tok.LParen) && !this.hasSpaceBefore(this.pos)) {
      return this.parseRef(term, false);
    }
    return term;
  }

  private parsePrimary(): Term | undefined {
    if (this.pos === this.identAt) return this.parseVar();
    const loc = this.loc(this.pos);
    switch (this.tok()) {
      case Tok.Null:
        this.advance();
        return { type: "null", loc };
      case Tok.True:
      case Tok.False: {
        const value = this.tok() === Tok.True;
        this.advance();
        return { type: "boolean", value, loc };
      }
      case Tok.Sub:
      case Tok.Dot:
      case Tok.Number:
        return this.parseNumber();
      case Tok.String:
        return this.parseString();
      case Tok.TemplateStringPart:
      case Tok.TemplateStringEnd:
      case Tok.RawTemplateStringPart:
      case Tok.RawTemplateStringEnd:
        return this.parseTemplateString();
      case Tok.Ident:
      case Tok.Contains:
        return this.parseVar();
      case Tok.LBrack:
        return this.parseArray();
      case Tok.LBrace:
        return this.parseSetOrObject();
      case Tok.LParen:
        return this.parseParenthesized();
      default:
        this.illegal("");
        return undefined;
    }
  }

  private parseVar(): VarTerm {
    const term: VarTerm = { type: "var", name: this.text(this.pos), loc: this.loc(this.pos) };
    this.advance();
    return term;
  }

  /** A number literal, with a leading `-` and/or `.` folded into its text as OPA does. */
  private parseNumber(): Term | undefined {
    const loc = this.loc(this.pos);
    let prefix = "";
    if (this.tok() === Tok.Sub) {
      prefix = "-";
      this.advance();
      if (this.tok() !== Tok.Number && this.tok() !== Tok.Dot) {
        this.illegal("expected number");
        return undefined;
      }
    }
    if (this.tok() === Tok.Dot) {
      prefix += ".";
      this.advance();
      if (this.tok() !== Tok.Number) {
        this.illegal("expected number");
        return undefined;
      }
    }
    const literal = this.text(this.pos);
    const problem = numberLiteralProblem(prefix, literal);
    if (problem === "number too big") {
      this.error(this.loc(this.pos), problem);
      return undefined;
    }
    if (problem !== undefined) {
      this.illegal(problem);
      return undefined;
    }
    this.advance();
    return { type: "number", value: prefix + literal, loc };
  }

  private parseString(): Term | undefined {
    const index = this.pos;
    const start = this.startOf(index);
    const end = this.endOf(index);
    const inner = this.src.slice(start + 1, end - 1);
    let value: string | undefined = inner;
    if (this.src.charCodeAt(start) === DOUBLE_QUOTE && inner.includes("\\")) {
      value = decodeStringLiteral(inner);
      if (value === undefined) {
        this.error(this.loc(index), `illegal string literal: ${this.src.slice(start, end)}`);
        return undefined;
      }
    }
    this.advance();
    return { type: "string", value, loc: this.loc(index) };
  }

  /**
   * OPA's `parseTemplateString`: text pieces and, between them, one expression each (not
   * negated, no `=`/`:=`, no `some`/`every`), closed by the `}` that resumes the string.
   */
  private parseTemplateString(): Term | undefined {
    const loc = this.loc(this.pos);
    const raw = this.tok() === Tok.RawTemplateStringPart || this.tok() === Tok.RawTemplateStringEnd;
    const parts: Array<ScalarTerm | Expr> = [];
    for (;;) {
      const index = this.pos;
      const kind = this.tok();
      const text = this.templateText(index, raw);
      if (text === undefined) {
        this.error(this.loc(index), `illegal template-string part: ${this.text(index)}`);
        return undefined;
      }
      if (text.length > 0) parts.push({ type: "string", value: text, loc: this.loc(index) });
      this.advance();
      if (kind === Tok.TemplateStringEnd || kind === Tok.RawTemplateStringEnd) break;
      const commentsBefore = this.commentsBefore(this.startOf(this.pos));
      const expr = this.parseLiteral();
      if (expr === undefined) {
        this.error(this.loc(this.pos), "invalid template-string expression");
        return undefined;
      }
      const problem = templateExprProblem(expr);
      if (problem !== undefined) {
        this.error(expr.loc, problem);
        return undefined;
      }
      const node = expr.node;
      const scalar =
        expr.with.length === 0 &&
        (node.type === "string" ||
          node.type === "number" ||
          node.type === "boolean" ||
          node.type === "null") &&
        this.commentsBefore(this.startOf(this.pos)) === commentsBefore;
      parts.push(scalar ? node : expr);
      if (this.tok() !== Tok.RBrace) {
        this.error(this.loc(this.pos), "expected } to end template string expression");
        return undefined;
      }
      this.advance();
      const next = this.tok();
      const expected = raw
        ? next === Tok.RawTemplateStringPart || next === Tok.RawTemplateStringEnd
        : next === Tok.TemplateStringPart || next === Tok.TemplateStringEnd;
      if (!expected) {
        this.illegal("");
        return undefined;
      }
    }
    return { type: "templatestring", raw, parts, loc };
  }

  /** Number of comments that start before `offset`. */
  private commentsBefore(offset: number): number {
    let n = 0;
    for (const comment of this.ts.comments) if (comment.loc.offset < offset) n++;
    return n;
  }

  /** The text of a template-string token, brace escapes removed and (unless raw) decoded. */
  private templateText(index: number, raw: boolean): string | undefined {
    let start = this.startOf(index);
    if (!this.isTemplateResume(index)) start += 2; // `$"` or `$\``
    const inner = this.src.slice(start, this.endOf(index) - 1);
    let text = "";
    let runStart = 0;
    for (let i = 0; i < inner.length; i++) {
      if (inner.charCodeAt(i) !== 92) continue;
      if (inner[i + 1] === "{") {
        text += inner.slice(runStart, i);
        runStart = i + 1;
      }
      i++;
    }
    text += inner.slice(runStart);
    if (raw || !text.includes("\\")) return text;
    return decodeStringLiteral(text);
  }

  private isTemplateResume(index: number): boolean {
    return ((this.tokens[index * TOKEN_STRIDE + KIND_AND_FLAGS]! >> 8) & TEMPLATE_RESUME) !== 0;
  }

  private parseParenthesized(): Term | undefined {
    this.advance();
    const term = this.parseTermIn(true);
    if (term === undefined) return undefined;
    if (this.tok() !== Tok.RParen) {
      this.error(this.loc(this.pos), "non-terminated expression");
      return undefined;
    }
    this.advance();
    return term;
  }

  /**
   * OPA's `parseRef`: path operands and calls after `head`. Each `.`, `[` or `(` must follow the
   * previous token directly (`x [0]` is two terms); in rule heads the first may follow a space.
   */
  private parseRef(head: Term, spaceBeforeFirst: boolean): Term | undefined {
    if (!isRefHead(head)) this.error(head.loc, `illegal ref (head cannot be ${valueName(head)})`);
    const path: Term[] = [];
    for (let first = true; ; first = false) {
      if (this.hasSpaceBefore(this.pos) && !(first && spaceBeforeFirst)) return makeRef(head, path);
      switch (this.tok()) {
        case Tok.Dot: {
          const element = this.parseDotOperand();
          if (element === undefined) return undefined;
          path.push(element);
          break;
        }
        case Tok.LBrack: {
          const element = this.parseBracketOperand();
          if (element === undefined) return undefined;
          path.push(element);
          break;
        }
        case Tok.LParen:
          return this.parseCallAndSuffix(head, path);
        default:
          return makeRef(head, path);
      }
    }
  }

  private parseDotOperand(): Term | undefined {
    const dot = this.pos;
    this.advance();
    if (this.hasSpaceBefore(this.pos)) {
      const loc = this.loc(dot);
      const after = { file: loc.file, line: loc.line, col: loc.col + 1, offset: loc.offset + 1 };
      this.error(after, "unexpected whitespace token: expected identifier");
      return undefined;
    }
    if (this.tok() !== Tok.Ident && !isKeywordKind(this.tok())) {
      this.illegal("expected identifier");
      return undefined;
    }
    const element: Term = { type: "string", value: this.text(this.pos), loc: this.loc(this.pos) };
    this.advance();
    return element;
  }

  private parseBracketOperand(): Term | undefined {
    this.advance();
    const element = this.parseTermIn(true);
    if (element === undefined) return undefined;
    if (this.tok() !== Tok.RBrack) {
      // OPA's message names the wrong bracket; kept so messages match.
      this.illegal("expected [");
      return undefined;
    }
    this.advance();
    return element;
  }

  private parseCallAndSuffix(head: Term, path: Term[]): Term | undefined {
    const op = path.length > 0 ? makeRef(head, path) : head;
    if (op.type !== "var" && op.type !== "ref") {
      this.error(op.loc, `illegal call (operator cannot be ${valueName(op)})`);
      return undefined;
    }
    const call = this.parseCall(op);
    if (call === undefined) return undefined;
    const kind = this.tok();
    if (!this.hasSpaceBefore(this.pos) && (kind === Tok.Dot || kind === Tok.LBrack))
      return this.parseRef(call, false);
    return call;
  }

  /** `op(args)`; `set()` is the empty set. */
  private parseCall(op: VarTerm | RefTerm): Term | undefined {
    this.advance();
    if (this.tok() === Tok.RParen) {
      this.advance();
      if (op.type === "var" && op.name === "set") return { type: "set", items: [], loc: op.loc };
      return { type: "call", op, args: [], loc: op.loc };
    }
    const args = this.parseTermList(Tok.RParen, []);
    if (args === undefined) return undefined;
    return { type: "call", op, args, loc: op.loc };
  }

  /**
   * Comma-separated terms up to `end`, which it consumes (a trailing comma is allowed). When
   * `first` is given it is the already-parsed start of the first element.
   */
  private parseTermList(end: number, items: Term[], first?: Term): Term[] | undefined {
    if (first === undefined && this.tok() === end) {
      this.advance();
      return items;
    }
    let pending = first;
    for (;;) {
      const term = this.parseTermIn(false, pending);
      pending = undefined;
      if (term === undefined) return undefined;
      items.push(term);
      if (this.tok() === Tok.Comma) {
        this.advance();
        if (this.tok() !== end) continue;
      } else if (this.tok() !== end) {
        this.illegal(`expected "," or "${TOKEN_NAMES[end]}"`);
        return undefined;
      }
      this.advance();
      return items;
    }
  }

  private parseArray(): Term | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    if (this.tok() === Tok.RBrack) {
      this.advance();
      return { type: "array", items: [], loc };
    }
    const mayBeComprehension = !this.skipLeadingComma();
    const saved = this.save();
    const head = this.parseTerm();
    if (head === undefined) return undefined;
    let items: Term[] | undefined;
    if (this.tok() === Tok.Or && mayBeComprehension) {
      const body = this.parseComprehensionBody(Tok.RBrack);
      if (body !== undefined) return { type: "arraycompr", term: head, body, loc };
      if (this.tok() !== Tok.Comma) return undefined;
      // `[a | b, c]`: not a comprehension after all but an array starting with `a | b`.
      this.restore(saved);
      items = this.parseTermList(Tok.RBrack, []);
    } else {
      items = this.parseTermList(Tok.RBrack, [], head);
    }
    return items && { type: "array", items, loc };
  }

  /** Skips OPA's tolerated leading comma (`[, x]`); true if there was one. */
  private skipLeadingComma(): boolean {
    if (this.tok() !== Tok.Comma) return false;
    this.advance();
    return true;
  }

  /** After a comprehension's `|`: the body and the closing bracket. */
  private parseComprehensionBody(end: number): Body | undefined {
    this.advance();
    const body = this.parseBody(end);
    if (body === undefined) return undefined;
    this.advance();
    return body;
  }

  private parseSetOrObject(): Term | undefined {
    const loc = this.loc(this.pos);
    this.advance();
    if (this.tok() === Tok.RBrace) {
      this.advance();
      return { type: "object", entries: [], loc };
    }
    const mayBeComprehension = !this.skipLeadingComma();
    const saved = this.save();
    let head = this.parseTerm();
    if (head === undefined) return undefined;
    switch (this.tok()) {
      case Tok.Or:
        if (mayBeComprehension) return this.parseSetRest(saved, head, true, loc);
        break;
      case Tok.RBrace:
      case Tok.Comma:
        return this.parseSetRest(saved, head, mayBeComprehension, loc);
      case Tok.Colon:
        return this.parseObject(head, mayBeComprehension, loc);
    }
    head = this.parseTermIn(false, head);
    if (head === undefined) return undefined;
    switch (this.tok()) {
      case Tok.RBrace:
      case Tok.Comma:
        return this.parseSetRest(saved, head, false, loc);
      case Tok.Colon:
        return this.parseObject(head, mayBeComprehension, loc);
      default:
        this.illegal("non-terminated set");
        return undefined;
    }
  }

  /** OPA's `parseSet`: the rest of a set, or a set comprehension, after its first element. */
  private parseSetRest(
    saved: SavedState,
    head: Term,
    mayBeComprehension: boolean,
    loc: Location,
  ): Term | undefined {
    switch (this.tok()) {
      case Tok.RBrace:
        this.advance();
        return { type: "set", items: [head], loc };
      case Tok.Comma: {
        this.advance();
        const items = this.parseTermList(Tok.RBrace, [head]);
        return items && { type: "set", items, loc };
      }
      default: {
        if (mayBeComprehension) {
          const body = this.parseComprehensionBody(Tok.RBrace);
          if (body !== undefined) return { type: "setcompr", term: head, body, loc };
          if (this.tok() !== Tok.Comma) return undefined;
        }
        this.restore(saved);
        const items = this.parseTermList(Tok.RBrace, []);
        return items && { type: "set", items, loc };
      }
    }
  }

  /** OPA's `parseObject`, after the first key and its `:`. */
  private parseObject(key: Term, mayBeComprehension: boolean, loc: Location): Term | undefined {
    this.advance();
    const saved = this.save();
    let value = this.parseTerm();
    if (value === undefined) return undefined;
    const kind = this.tok();
    const endsValue = kind === Tok.RBrace || kind === Tok.Comma;
    if (mayBeComprehension && (endsValue || kind === Tok.Or)) {
      const object = this.parseObjectRest(key, value, true, loc);
      if (object !== undefined) return object;
      this.restore(saved);
      if (endsValue) {
        this.illegal("non-terminated object");
        return undefined;
      }
      value = this.parseTermIn(false);
    } else {
      value = this.parseTermIn(false, value);
    }
    if (value === undefined) return undefined;
    if (this.tok() === Tok.RBrace || this.tok() === Tok.Comma)
      return this.parseObjectRest(key, value, false, loc);
    this.illegal("non-terminated object");
    return undefined;
  }

  /** OPA's `parseObjectFinish`: the rest of an object, or an object comprehension. */
  private parseObjectRest(
    key: Term,
    value: Term,
    mayBeComprehension: boolean,
    loc: Location,
  ): Term | undefined {
    switch (this.tok()) {
      case Tok.RBrace:
        this.advance();
        return { type: "object", entries: [[key, value]], loc };
      case Tok.Or: {
        if (!mayBeComprehension) {
          this.illegal("non-terminated object");
          return undefined;
        }
        const body = this.parseComprehensionBody(Tok.RBrace);
        return body && { type: "objectcompr", key, value, body, loc };
      }
      case Tok.Comma: {
        this.advance();
        const entries = this.parseTermPairList([[key, value]]);
        return entries && { type: "object", entries, loc };
      }
      default:
        return undefined;
    }
  }

  private parseTermPairList(entries: Array<[Term, Term]>): Array<[Term, Term]> | undefined {
    if (this.tok() === Tok.RBrace) {
      this.advance();
      return entries;
    }
    for (;;) {
      const key = this.parseTermIn(false);
      if (key === undefined) return undefined;
      if (this.tok() !== Tok.Colon) {
        this.illegal('expected ":"');
        return undefined;
      }
      this.advance();
      const value = this.parseTermIn(false);
      if (value === undefined) return undefined;
      entries.push([key, value]);
      if (this.tok() === Tok.Comma) {
        this.advance();
        if (this.tok() !== Tok.RBrace) continue;
      } else if (this.tok() !== Tok.RBrace) {
        this.illegal('expected "," or "}"');
        return undefined;
      }
      this.advance();
      return entries;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

function annotationTarget(statement: Statement): AnnotationTarget | undefined {
  if (statement.kind === "package") return { kind: "package" };
  if (statement.kind === "import") return { kind: "import" };
  const rule = statement.rules[0];
  return rule === undefined ? undefined : { kind: "rule", rule };
}

function statementLoc(statement: Statement): Location {
  switch (statement.kind) {
    case "package":
      return statement.pkg.loc;
    case "import":
      return statement.imp.loc;
    case "rules":
      return statement.loc;
  }
}

/** Binding level of an infix operator token (2 relation … 6 factor), 0 for anything else. */
function binaryLevel(kind: number): number {
  switch (kind) {
    case Tok.Equal:
    case Tok.Neq:
    case Tok.Lt:
    case Tok.Gt:
    case Tok.Lte:
    case Tok.Gte:
      return 2;
    case Tok.Or:
      return 3;
    case Tok.And:
      return 4;
    case Tok.Add:
    case Tok.Sub:
      return 5;
    case Tok.Mul:
    case Tok.Quo:
    case Tok.Rem:
      return 6;
    default:
      return 0;
  }
}

function isArithmeticOrRelation(kind: number): boolean {
  return binaryLevel(kind) > 0;
}

/** OPA's `ValueName`. `data` and `input` alone are refs in OPA. */
function valueName(term: Term): string {
  switch (term.type) {
    case "arraycompr":
      return "arraycomprehension";
    case "setcompr":
      return "setcomprehension";
    case "objectcompr":
      return "objectcomprehension";
    case "var":
      return ROOT_DOCUMENTS.has(term.name) ? "ref" : "var";
    default:
      return term.type;
  }
}

/** The last plain operand of an and/or chain (the chain itself when it is not one). */
function rightmostOperand(expr: Expr): Expr {
  const node = expr.node;
  if (node.type !== "logical" || node.rhs.length !== 1) return expr;
  return rightmostOperand(node.rhs[0]!);
}

/** Why an expression cannot stand inside a template string, in OPA's words. */
function templateExprProblem(expr: Expr): string | undefined {
  const node = expr.node;
  if (expr.negated) return "unexpected negation ('not') in template-string expression";
  if (node.type === "call" && node.args.length === 2 && node.op.type === "var") {
    if (node.op.name === "eq") return "unexpected unification ('=') in template-string expression";
    if (node.op.name === "assign") return "unexpected assignment (':=') in template-string expression";
  }
  if (node.type === "every") return "unexpected 'every' in template-string expression";
  if (node.type === "some") return "unexpected 'some' in template-string expression";
  if (node.type === "body" || node.type === "logical") return "invalid template-string expression";
  return undefined;
}

function isRefHead(term: Term): boolean {
  switch (term.type) {
    case "var":
    case "array":
    case "object":
    case "set":
    case "arraycompr":
    case "setcompr":
    case "objectcompr":
    case "call":
      return true;
    default:
      return false;
  }
}

function makeRef(head: Term, path: Term[]): Term {
  return path.length === 0 ? head : { type: "ref", head, path, loc: head.loc };
}

/** Whether a term contains no variables (OPA's `IsGround`). */
function isGround(term: Term): boolean {
  switch (term.type) {
    case "null":
    case "boolean":
    case "number":
    case "string":
      return true;
    case "array":
    case "set":
      return term.items.every(isGround);
    case "object":
      return term.entries.every(([key, value]) => isGround(key) && isGround(value));
    case "ref":
      return isGround(term.head) && term.path.every(isGround);
    default:
      return false;
  }
}

/** The parts of a default rule value that are not constant, as OPA names them. */
function nonConstantParts(term: Term): string[] {
  switch (term.type) {
    case "var":
    case "ref":
    case "call":
      return [valueName(term)];
    case "array":
    case "set":
      return term.items.flatMap(nonConstantParts);
    case "object":
      return term.entries.flatMap(([key, value]) => [...nonConstantParts(key), ...nonConstantParts(value)]);
    default:
      return [];
  }
}

function missingAssignedValue(name: string, head: RuleHead, isDefault: boolean): string {
  if (head.args !== undefined && head.args.length > 0) {
    return `expected function value term (e.g., ${name}(...) := <VALUE> { ... })`;
  }
  if (isDefault) return `expected default rule value term (e.g., default ${name} := <VALUE>)`;
  return `expected rule value term (e.g., ${name} := <VALUE> { ... })`;
}

/** Why a top-level expression statement cannot be a rule, in OPA's words (if it cannot). */
function bodyRuleProblem(body: Body): string | undefined {
  const expr = body[0]!;
  if (body.length > 1) return "multiple expressions cannot be used for rule head";
  if (expr.with.length > 0) return "expressions using with keyword cannot be used for rule head";
  if (expr.negated) return "negated expressions cannot be used for rule head";
  if (expr.node.type === "some") return "'some' declarations cannot be used for rule head";
  if (expr.node.type === "every") return "expression cannot be used for rule head";
  return undefined;
}
