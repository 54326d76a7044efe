/**
 * The Rego scanner. It follows OPA's `ast/internal/scanner` token for token (same token kinds,
 * same number/string/comment rules, same error messages), but scans the whole source up front
 * into flat typed arrays so the parser can save and restore its position with a single index.
 *
 * Whitespace and comments are not tokens. Instead each token records whether whitespace (or a
 * comment) precedes it and whether a newline does: the parser needs the first to decide whether
 * `.`, `[` and `(` continue a term (`x.y`, `f(x)`) and the second to split body expressions.
 */
import type { Comment } from "./ast.ts";

/** Token kinds, in the order and with the names of OPA's `tokens` package. */
export const Tok = {
  Illegal: 0,
  EOF: 1,
  Ident: 2,
  Package: 3,
  Import: 4,
  As: 5,
  Default: 6,
  Else: 7,
  Not: 8,
  Some: 9,
  With: 10,
  Null: 11,
  True: 12,
  False: 13,
  Number: 14,
  String: 15,
  LBrack: 16,
  RBrack: 17,
  LBrace: 18,
  RBrace: 19,
  LParen: 20,
  RParen: 21,
  Comma: 22,
  Colon: 23,
  Add: 24,
  Sub: 25,
  Mul: 26,
  Quo: 27,
  Rem: 28,
  And: 29,
  Or: 30,
  Unify: 31,
  Equal: 32,
  Assign: 33,
  In: 34,
  Neq: 35,
  Gt: 36,
  Lt: 37,
  Gte: 38,
  Lte: 39,
  Dot: 40,
  Semicolon: 41,
  Every: 42,
  Contains: 43,
  If: 44,
  /** `$"text{` or, after an expression's `}`, `text{`: a template-string piece before an expression. */
  TemplateStringPart: 45,
  /** `$"text"` or `text"`: the last piece of a template string. */
  TemplateStringEnd: 46,
  /** The raw (backtick) forms of the two above. */
  RawTemplateStringPart: 47,
  RawTemplateStringEnd: 48,
} as const;

export type TokenKind = (typeof Tok)[keyof typeof Tok];

/** How OPA names each token kind in messages (`unexpected } token`, `unexpected plus token`). */
export const TOKEN_NAMES: readonly string[] = [
  "illegal",
  "eof",
  "identifier",
  "package",
  "import",
  "as",
  "default",
  "else",
  "not",
  "some",
  "with",
  "null",
  "true",
  "false",
  "number",
  "string",
  "[",
  "]",
  "{",
  "}",
  "(",
  ")",
  ",",
  ":",
  "plus",
  "minus",
  "mul",
  "div",
  "rem",
  "and",
  "or",
  "eq",
  "equal",
  "assign",
  "in",
  "neq",
  "gt",
  "lt",
  "gte",
  "lte",
  ".",
  ";",
  "every",
  "contains",
  "if",
  "template-string",
  "template-string",
  "template-string",
  "template-string",
];

const KEYWORDS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ["package", Tok.Package],
  ["import", Tok.Import],
  ["as", Tok.As],
  ["default", Tok.Default],
  ["else", Tok.Else],
  ["not", Tok.Not],
  ["some", Tok.Some],
  ["with", Tok.With],
  ["null", Tok.Null],
  ["true", Tok.True],
  ["false", Tok.False],
  ["in", Tok.In],
  ["every", Tok.Every],
  ["contains", Tok.Contains],
  ["if", Tok.If],
]);

const LONGEST_KEYWORD = 8;

/** Whether a token kind is a Rego v1 keyword (all of them may follow a `.` in a ref). */
export function isKeywordKind(kind: number): boolean {
  return (
    (kind >= Tok.Package && kind <= Tok.False) || kind === Tok.In || (kind >= Tok.Every && kind <= Tok.If)
  );
}

/** The Rego version a source is written in: 0 (OPA's `RegoV0`, `--v0-compatible`) or 1. */
export type RegoVersion = 0 | 1;

/**
 * The keywords Rego v0 reads as names until `import future.keywords[.kw]` or `import rego.v1`
 * enables them (OPA's `futureKeywordsV0`); Rego v1 always has them.
 */
export const FUTURE_KEYWORDS_V0: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ["contains", Tok.Contains],
  ["every", Tok.Every],
  ["if", Tok.If],
  ["in", Tok.In],
]);

/** Whether `name` is a keyword of that Rego version (OPA's `IsKeywordInRegoVersion`). */
export function isKeyword(name: string, version: RegoVersion = 1): boolean {
  return KEYWORDS.has(name) && (version === 1 || !FUTURE_KEYWORDS_V0.has(name));
}

/** Token flag: whitespace or a comment separates this token from the previous one. */
export const WS_BEFORE = 1;
/** Token flag: a newline separates this token from the previous one. */
export const NL_BEFORE = 2;

/** Token flag: a template-string piece resuming after an expression's `}` (no `$"` prefix). */
export const TEMPLATE_RESUME = 4;

/** Number of `Int32Array` slots per token in `TokenStream.tokens`. */
export const TOKEN_STRIDE = 5;
/** Slot: token kind in the low 8 bits, WS_BEFORE / NL_BEFORE flags above. */
export const KIND_AND_FLAGS = 0;
/** Slot: offset of the token's first character. */
export const START = 1;
/** Slot: offset just past the token. */
export const END = 2;
/** Slot: 1-based line of the token's first character. */
export const LINE = 3;
/** Slot: 1-based column (in code points) of the token's first character. */
export const COL = 4;

/** The scanned source. Token `i` occupies `tokens[i * TOKEN_STRIDE …]`; the last one is EOF. */
export interface TokenStream {
  readonly source: string;
  readonly file: string;
  readonly count: number;
  readonly tokens: Int32Array;
  /** Scanner errors of `Illegal` tokens, by token index. */
  readonly errors: ReadonlyMap<number, readonly string[]> | undefined;
  readonly comments: Comment[];
}

const CH_TAB = 9;
const CH_LF = 10;
const CH_CR = 13;
const CH_SPACE = 32;
const CH_BANG = 33;
const CH_QUOTE = 34;
const CH_HASH = 35;
const CH_DOLLAR = 36;
const CH_PERCENT = 37;
const CH_AMP = 38;
const CH_LPAREN = 40;
const CH_RPAREN = 41;
const CH_STAR = 42;
const CH_PLUS = 43;
const CH_COMMA = 44;
const CH_MINUS = 45;
const CH_DOT = 46;
const CH_SLASH = 47;
const CH_0 = 48;
const CH_9 = 57;
const CH_COLON = 58;
const CH_SEMI = 59;
const CH_LT = 60;
const CH_EQ = 61;
const CH_GT = 62;
const CH_LBRACK = 91;
const CH_BACKSLASH = 92;
const CH_RBRACK = 93;
const CH_UNDERSCORE = 95;
const CH_BACKTICK = 96;
const CH_LBRACE = 123;
const CH_PIPE = 124;
const CH_RBRACE = 125;
const CH_BOM = 0xfeff;

const UNICODE_DIGIT = /^\p{Nd}$/u;

function isLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === CH_UNDERSCORE;
}

function isDecimal(c: number): boolean {
  return c >= CH_0 && c <= CH_9;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Scans `source` into tokens. Never throws: malformed input yields `Illegal` tokens. */
export function tokenize(source: string, file: string): TokenStream {
  return new Scanner(source, file).run();
}

/**
 * A token buffer handed back by a finished parse, reused by the next `tokenize` so that
 * parsing many small modules does not allocate a typed array each time.
 */
let spareBuffer: Int32Array | undefined;

/** Largest buffer kept for reuse (4 MiB), so one huge file does not pin its buffer forever. */
const MAX_SPARE_LENGTH = 1 << 20;

/** Gives `stream`'s buffer back for reuse; the stream must not be read afterwards. */
export function recycleTokens(stream: TokenStream): void {
  const buffer = stream.tokens;
  if (buffer.length > MAX_SPARE_LENGTH) return;
  if (spareBuffer === undefined || spareBuffer.length < buffer.length) spareBuffer = buffer;
}

function takeBuffer(minLength: number): Int32Array {
  const spare = spareBuffer;
  if (spare !== undefined && spare.length >= minLength) {
    spareBuffer = undefined;
    return spare;
  }
  return new Int32Array(minLength);
}

class Scanner {
  private readonly src: string;
  private readonly file: string;
  private readonly len: number;
  private i = 0;
  private line = 1;
  private lineStart = 0;
  /** UTF-16 low surrogates seen on the current line before `i`, so columns count code points. */
  private lineSurrogates = 0;

  private count = 0;
  private tokens: Int32Array;
  private errors: Map<number, string[]> | undefined;
  private readonly comments: Comment[] = [];
  private pendingErrors: string[] | undefined;
  /**
   * Open template-string expressions, innermost last: the raw flag of each template and the
   * number of `{` opened inside its current expression, so the `}` that closes the expression
   * (and resumes the string) is told apart from one closing a set or object.
   */
  private readonly templates: Array<{ raw: boolean; depth: number }> = [];
  /** Set after the `}` closing a template expression: the string resumes right after it. */
  private resumeTemplate: boolean | undefined;

  constructor(source: string, file: string) {
    this.src = source;
    this.file = file;
    this.len = source.length;
    // Rego averages well under one token per three characters.
    this.tokens = takeBuffer((Math.ceil(source.length / 3) + 8) * TOKEN_STRIDE);
    if (this.len > 0 && source.charCodeAt(0) === CH_BOM) {
      this.i = 1;
      this.lineStart = 1;
    }
  }

  run(): TokenStream {
    for (;;) {
      const resume = this.resumeTemplate;
      if (resume !== undefined) {
        this.resumeTemplate = undefined;
        const start = this.i;
        const line = this.line;
        const col = this.column(start);
        const kind = this.scanTemplateString(resume);
        this.push(kind, start, this.i, line, col, TEMPLATE_RESUME);
        continue;
      }
      const flags = this.skipWhitespaceAndComments();
      const start = this.i;
      const line = this.line;
      const col = this.column(start);
      if (start >= this.len) {
        this.push(Tok.EOF, start, start, line, col, flags);
        break;
      }
      const kind = this.scanToken();
      this.push(kind, start, this.i, line, col, flags);
    }
    return {
      source: this.src,
      file: this.file,
      count: this.count,
      tokens: this.tokens,
      errors: this.errors,
      comments: this.comments,
    };
  }

  private column(offset: number): number {
    return offset - this.lineStart - this.lineSurrogates + 1;
  }

  private push(kind: TokenKind, start: number, end: number, line: number, col: number, flags: number): void {
    let at = this.count * TOKEN_STRIDE;
    if (at === this.tokens.length) this.grow();
    const n = this.count++;
    const pending = this.pendingErrors;
    if (pending !== undefined) {
      this.errors ??= new Map();
      this.errors.set(n, pending);
      this.pendingErrors = undefined;
      kind = Tok.Illegal;
    }
    const tokens = this.tokens;
    tokens[at++] = kind | (flags << 8);
    tokens[at++] = start;
    tokens[at++] = end;
    tokens[at++] = line;
    tokens[at] = col;
  }

  private grow(): void {
    const grown = new Int32Array(this.tokens.length * 2);
    grown.set(this.tokens);
    this.tokens = grown;
  }

  private error(message: string): void {
    if (this.pendingErrors === undefined) this.pendingErrors = [message];
    else this.pendingErrors.push(message);
  }

  private newline(afterOffset: number): void {
    this.line++;
    this.lineStart = afterOffset;
    this.lineSurrogates = 0;
  }

  /** Skips blanks and comments; returns the WS_BEFORE / NL_BEFORE flags for the next token. */
  private skipWhitespaceAndComments(): number {
    const src = this.src;
    let flags = 0;
    while (this.i < this.len) {
      const c = src.charCodeAt(this.i);
      if (c === CH_SPACE || c === CH_TAB || c === CH_CR) {
        this.i++;
        flags |= WS_BEFORE;
      } else if (c === CH_LF) {
        this.i++;
        this.newline(this.i);
        flags |= WS_BEFORE | NL_BEFORE;
      } else if (c === CH_HASH) {
        if (!this.scanComment()) break;
        flags |= WS_BEFORE;
      } else {
        break;
      }
    }
    return flags;
  }

  /**
   * Records a comment. A comment holding a character OPA rejects (NUL, a byte-order mark) is
   * left in place to be scanned as an illegal token; returns false then.
   */
  private scanComment(): boolean {
    const src = this.src;
    const start = this.i;
    const col = this.column(start);
    let end = start + 1;
    let surrogates = 0;
    while (end < this.len) {
      const c = src.charCodeAt(end);
      if (c === CH_LF) break;
      if (c === 0 || c === CH_BOM) return false;
      if (isLowSurrogate(c)) surrogates++;
      end++;
    }
    const textEnd = end > start + 1 && src.charCodeAt(end - 1) === CH_CR ? end - 1 : end;
    this.comments.push({
      text: src.slice(start + 1, textEnd),
      loc: { file: this.file, line: this.line, col, offset: start },
    });
    this.lineSurrogates += surrogates;
    this.i = end;
    return true;
  }

  private scanToken(): TokenKind {
    const src = this.src;
    const c = src.charCodeAt(this.i);
    if (isLetter(c)) return this.scanIdentifier();
    if (isDecimal(c)) return this.scanNumber();
    this.i++;
    switch (c) {
      case CH_HASH:
        // Only reached for a comment holding an illegal character.
        this.i--;
        this.scanIllegalComment();
        return Tok.Illegal;
      case CH_QUOTE:
        this.scanString();
        return Tok.String;
      case CH_BACKTICK:
        this.scanRawString();
        return Tok.String;
      case CH_LBRACK:
        return Tok.LBrack;
      case CH_RBRACK:
        return Tok.RBrack;
      case CH_LBRACE: {
        const open = this.templates[this.templates.length - 1];
        if (open !== undefined) open.depth++;
        return Tok.LBrace;
      }
      case CH_RBRACE: {
        const open = this.templates[this.templates.length - 1];
        if (open !== undefined) {
          if (open.depth === 0) {
            this.templates.pop();
            this.resumeTemplate = open.raw;
          } else {
            open.depth--;
          }
        }
        return Tok.RBrace;
      }
      case CH_LPAREN:
        return Tok.LParen;
      case CH_RPAREN:
        return Tok.RParen;
      case CH_COMMA:
        return Tok.Comma;
      case CH_COLON:
        return this.follow(CH_EQ, Tok.Assign, Tok.Colon);
      case CH_PLUS:
        return Tok.Add;
      case CH_MINUS:
        return Tok.Sub;
      case CH_STAR:
        return Tok.Mul;
      case CH_SLASH:
        return Tok.Quo;
      case CH_PERCENT:
        return Tok.Rem;
      case CH_AMP:
        return Tok.And;
      case CH_PIPE:
        return Tok.Or;
      case CH_EQ:
        return this.follow(CH_EQ, Tok.Equal, Tok.Unify);
      case CH_GT:
        return this.follow(CH_EQ, Tok.Gte, Tok.Gt);
      case CH_LT:
        return this.follow(CH_EQ, Tok.Lte, Tok.Lt);
      case CH_BANG:
        if (this.follow(CH_EQ, Tok.Neq, Tok.Illegal) === Tok.Neq) return Tok.Neq;
        this.error("illegal ! character");
        return Tok.Illegal;
      case CH_SEMI:
        return Tok.Semicolon;
      case CH_DOT:
        return Tok.Dot;
      case CH_DOLLAR:
        return this.scanDollar();
      default:
        return this.scanUnknown(c);
    }
  }

  /** Consumes `next` if it follows and returns `ifNext`, else returns `otherwise`. */
  private follow(next: number, ifNext: TokenKind, otherwise: TokenKind): TokenKind {
    if (this.i < this.len && this.src.charCodeAt(this.i) === next) {
      this.i++;
      return ifNext;
    }
    return otherwise;
  }

  private scanDollar(): TokenKind {
    const next = this.i < this.len ? this.src.charCodeAt(this.i) : -1;
    if (next === CH_QUOTE || next === CH_BACKTICK) {
      this.i++;
      return this.scanTemplateString(next === CH_BACKTICK);
    }
    this.error("illegal $ character");
    return Tok.Illegal;
  }

  /**
   * Scans template-string text up to and including the `{` that opens an expression (a `Part`
   * token) or the closing quote (an `End` token), as OPA's scanner does. `\{` escapes a brace;
   * the parser removes the escapes and decodes the text.
   */
  private scanTemplateString(raw: boolean): TokenKind {
    const src = this.src;
    const close = raw ? CH_BACKTICK : CH_QUOTE;
    for (;;) {
      if (this.i >= this.len) {
        this.error("non-terminated string");
        return raw ? Tok.RawTemplateStringEnd : Tok.TemplateStringEnd;
      }
      const c = src.charCodeAt(this.i);
      if (c === CH_LF && !raw) {
        this.error("non-terminated string");
        return Tok.TemplateStringEnd;
      }
      this.i++;
      if (c === close) return raw ? Tok.RawTemplateStringEnd : Tok.TemplateStringEnd;
      if (c === CH_LBRACE) {
        this.templates.push({ raw, depth: 0 });
        return raw ? Tok.RawTemplateStringPart : Tok.TemplateStringPart;
      }
      if (c === CH_LF) {
        this.newline(this.i);
      } else if (c === CH_BACKSLASH) {
        const next = this.i < this.len ? src.charCodeAt(this.i) : -1;
        if (next === CH_LBRACE) this.i++;
        else if (!raw) this.scanEscape();
      } else {
        this.checkStringChar(c);
      }
    }
  }

  /** Any other character is an illegal token of one code point (OPA reports "illegal token"). */
  private scanUnknown(c: number): TokenKind {
    if (c === 0) this.error("illegal null character");
    else if (c === CH_BOM) this.error("illegal byte-order mark");
    else if (c >= 0xd800 && c <= 0xdbff && this.i < this.len && isLowSurrogate(this.src.charCodeAt(this.i))) {
      this.i++;
      this.lineSurrogates++;
    }
    return Tok.Illegal;
  }

  private scanIllegalComment(): void {
    const src = this.src;
    while (this.i < this.len) {
      const c = src.charCodeAt(this.i);
      if (c === CH_LF) break;
      if (c === 0) this.error("illegal null character");
      else if (c === CH_BOM) this.error("illegal byte-order mark");
      else if (isLowSurrogate(c)) this.lineSurrogates++;
      this.i++;
    }
  }

  private scanIdentifier(): TokenKind {
    const src = this.src;
    const start = this.i;
    let i = start + 1;
    for (;;) {
      if (i >= this.len) break;
      const c = src.charCodeAt(i);
      if (isLetter(c) || isDecimal(c)) {
        i++;
      } else if (c >= 128) {
        const width = this.unicodeDigitWidth(i);
        if (width === 0) break;
        i += width;
      } else {
        break;
      }
    }
    this.i = i;
    if (i - start > LONGEST_KEYWORD) return Tok.Ident;
    return KEYWORDS.get(src.slice(start, i)) ?? Tok.Ident;
  }

  /** Identifiers may continue with any Unicode decimal digit (Go's `unicode.IsDigit`). */
  private unicodeDigitWidth(at: number): number {
    const cp = this.src.codePointAt(at) ?? 0;
    if (!UNICODE_DIGIT.test(String.fromCodePoint(cp))) return 0;
    if (cp > 0xffff) {
      this.lineSurrogates++;
      return 2;
    }
    return 1;
  }

  private scanDigits(): boolean {
    const start = this.i;
    while (this.i < this.len && isDecimal(this.src.charCodeAt(this.i))) this.i++;
    return this.i > start;
  }

  private scanNumber(): TokenKind {
    const src = this.src;
    this.scanDigits();
    if (this.i < this.len && src.charCodeAt(this.i) === CH_DOT) {
      this.i++;
      if (!this.scanDigits()) this.error("expected fraction");
    }
    if (this.i < this.len && (src.charCodeAt(this.i) | 0x20) === 101) {
      this.i++;
      const sign = this.i < this.len ? src.charCodeAt(this.i) : -1;
      if (sign === CH_PLUS || sign === CH_MINUS) this.i++;
      if (!this.scanDigits()) this.error("expected exponent");
    }
    if (this.i < this.len && isLetter(src.charCodeAt(this.i))) {
      this.error("illegal number format");
      while (this.i < this.len) {
        const c = src.charCodeAt(this.i);
        if (!isLetter(c) && !isDecimal(c)) break;
        this.i++;
      }
    }
    return Tok.Number;
  }

  /** Scans a `"…"` string after its opening quote. Escapes are decoded by the parser. */
  private scanString(): void {
    const src = this.src;
    for (;;) {
      if (this.i >= this.len) {
        this.error("non-terminated string");
        return;
      }
      const c = src.charCodeAt(this.i);
      if (c === CH_LF) {
        this.error("non-terminated string");
        return;
      }
      this.i++;
      if (c === CH_QUOTE) return;
      if (c === CH_BACKSLASH) this.scanEscape();
      else this.checkStringChar(c);
    }
  }

  private scanEscape(): void {
    const next = this.i < this.len ? this.src.charCodeAt(this.i) : -1;
    switch (next) {
      case CH_BACKSLASH:
      case CH_QUOTE:
      case CH_SLASH:
      case 98: // b
      case 102: // f
      case 110: // n
      case 114: // r
      case 116: // t
        this.i++;
        return;
      case 117: // u: like OPA, skip four characters; the parser validates the hex digits
        this.i++;
        for (let k = 0; k < 4 && this.i < this.len; k++) {
          const c = this.src.charCodeAt(this.i++);
          if (c === CH_LF) this.newline(this.i);
          else this.checkStringChar(c);
        }
        return;
      default:
        this.error("illegal escape sequence");
    }
  }

  private checkStringChar(c: number): void {
    if (c === 0) this.error("illegal null character");
    else if (c === CH_BOM) this.error("illegal byte-order mark");
    else if (isLowSurrogate(c)) this.lineSurrogates++;
  }

  /** Scans a backtick string after its opening backtick; it may span lines. */
  private scanRawString(): void {
    const src = this.src;
    for (;;) {
      if (this.i >= this.len) {
        this.error("non-terminated string");
        return;
      }
      const c = src.charCodeAt(this.i++);
      if (c === CH_BACKTICK) return;
      if (c === CH_LF) this.newline(this.i);
      else this.checkStringChar(c);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Literal values

/**
 * Checks a number literal the way OPA's parser does after scanning (`prefix` is the `-` and/or
 * `.` written before the digits); returns the `illegal` note, or `"number too big"` for an
 * exponent beyond OPA's limit (about 10^±30000).
 */
export function numberLiteralProblem(prefix: string, literal: string): string | undefined {
  const afterDot = prefix.endsWith(".");
  if (!afterDot && literal.length > 1 && literal.charCodeAt(0) === 48) {
    const second = literal[1];
    const scientific = literal.length > 2 && (second === "e" || second === "E");
    if (second !== "." && !scientific) return "expected number without leading zero";
  }
  if (afterDot && literal.includes(".")) return "invalid float";
  return binaryExponentTooLarge(literal) ? "number too big" : undefined;
}

/** Whether |n| ≥ 2^100000 or 0 < |n| < 2^-100000 (OPA's `big.Float` exponent limit). */
function binaryExponentTooLarge(literal: string): boolean {
  const exponentAt = literal.search(/[eE]/);
  if (exponentAt < 0 && literal.length < 30000) return false;
  const mantissa = exponentAt < 0 ? literal : literal.slice(0, exponentAt);
  const exponent = exponentAt < 0 ? 0 : Number(literal.slice(exponentAt + 1));
  const dot = mantissa.indexOf(".");
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const integerDigits = dot < 0 ? mantissa.length : dot;
  const firstNonZero = digits.search(/[1-9]/);
  if (firstNonZero < 0) return false;
  const decimalExponent = exponent + integerDigits - firstNonZero - 1;
  const leading = Number(`0.${digits.slice(firstNonZero, firstNonZero + 15)}`) * 10;
  const binaryExponent = Math.floor((decimalExponent + Math.log10(leading)) * Math.LOG2E * Math.LN10) + 1;
  return binaryExponent > 100000 || binaryExponent < -100000;
}

function hexValue(text: string, at: number): number {
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    let digit: number;
    if (c >= 48 && c <= 57) digit = c - 48;
    else if (c >= 97 && c <= 102) digit = c - 87;
    else if (c >= 65 && c <= 70) digit = c - 55;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/**
 * Decodes the inside of a `"…"` string like Go's `encoding/json` (which OPA uses): control
 * characters are invalid, and a `\u` escape of an unpaired surrogate becomes U+FFFD.
 */
export function decodeStringLiteral(inner: string): string | undefined {
  let out = "";
  let runStart = 0;
  let i = 0;
  while (i < inner.length) {
    const c = inner.charCodeAt(i);
    if (c < 0x20) return undefined;
    if (c !== 92) {
      i++;
      continue;
    }
    out += inner.slice(runStart, i);
    const escaped = inner[i + 1];
    if (escaped === "u") {
      const decoded = decodeUnicodeEscape(inner, i);
      if (decoded === undefined) return undefined;
      out += decoded.text;
      i = decoded.next;
    } else {
      const simple = escaped === undefined ? undefined : SIMPLE_ESCAPES[escaped];
      if (simple === undefined) return undefined;
      out += simple;
      i += 2;
    }
    runStart = i;
  }
  return out + inner.slice(runStart);
}

function decodeUnicodeEscape(text: string, at: number): { text: string; next: number } | undefined {
  const unit = hexValue(text, at + 2);
  if (unit < 0) return undefined;
  if (unit < 0xd800 || unit > 0xdfff) return { text: String.fromCharCode(unit), next: at + 6 };
  if (unit <= 0xdbff && text.charCodeAt(at + 6) === 92 && text[at + 7] === "u") {
    const low = hexValue(text, at + 8);
    if (low >= 0xdc00 && low <= 0xdfff) return { text: String.fromCharCode(unit, low), next: at + 12 };
  }
  return { text: "\ufffd", next: at + 6 };
}
