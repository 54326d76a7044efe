/**
 * A module's tokens, kept for the formatter to find where AST nodes end: the parser records
 * where each node starts, and OPA's formatter also needs the source each node spans. Brackets
 * are matched once, so a collection, call or body ends at the partner of its opening bracket.
 */
import {
  COL,
  END,
  KIND_AND_FLAGS,
  LINE,
  START,
  TOKEN_STRIDE,
  Tok,
  type TokenStream,
  WS_BEFORE,
} from "../syntax/lexer.ts";

export { Tok };

const OPENERS: ReadonlySet<number> = new Set([
  Tok.LParen,
  Tok.LBrack,
  Tok.LBrace,
  Tok.TemplateStringPart,
  Tok.RawTemplateStringPart,
]);
const CLOSERS: ReadonlySet<number> = new Set([Tok.RParen, Tok.RBrack, Tok.RBrace]);

/** Tokens after which `(` opens a call's arguments rather than a parenthesized term. */
const CALLABLE: ReadonlySet<number> = new Set([Tok.Ident, Tok.RBrack]);

export class SourceTokens {
  readonly source: string;
  private readonly data: Int32Array;
  private readonly count: number;
  /** For each bracket token, the index of its partner (-1 when unbalanced or not a bracket). */
  private readonly partner: Int32Array;

  /** Copies what it needs from `stream`, which the parser recycles. */
  constructor(stream: TokenStream) {
    this.source = stream.source;
    this.count = stream.count;
    this.data = stream.tokens.slice(0, stream.count * TOKEN_STRIDE);
    this.partner = new Int32Array(stream.count).fill(-1);
    const open: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const kind = this.kind(i);
      // A template string's `…{` opens an expression that a `}` token closes.
      if (OPENERS.has(kind)) {
        open.push(i);
      } else if (CLOSERS.has(kind)) {
        const opener = open.pop();
        if (opener !== undefined) {
          this.partner[opener] = i;
          this.partner[i] = opener;
        }
      }
    }
  }

  kind(index: number): number {
    if (index < 0 || index >= this.count) return Tok.EOF;
    return this.data[index * TOKEN_STRIDE + KIND_AND_FLAGS]! & 0xff;
  }

  private flags(index: number): number {
    return this.data[index * TOKEN_STRIDE + KIND_AND_FLAGS]! >> 8;
  }

  start(index: number): number {
    return this.data[index * TOKEN_STRIDE + START]!;
  }

  end(index: number): number {
    return this.data[index * TOKEN_STRIDE + END]!;
  }

  line(index: number): number {
    return this.data[index * TOKEN_STRIDE + LINE]!;
  }

  col(index: number): number {
    return this.data[index * TOKEN_STRIDE + COL]!;
  }

  /** The source from the start of token `first` to the end of token `last`. */
  text(first: number, last: number): string {
    return this.source.slice(this.start(first), this.end(last));
  }

  /** The index of the token starting at `offset` (a node's start is always a token's). */
  indexAt(offset: number): number {
    let low = 0;
    let high = this.count - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.start(mid) < offset) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The last token before the end of the file. */
  lastToken(): number {
    return this.count - 2;
  }

  /** The partner of the opening bracket at `index` (itself when there is none). */
  closing(index: number): number {
    const partner = this.partner[index] ?? -1;
    return partner < 0 ? index : partner;
  }

  /** The partner of the closing bracket at `index` (-1 when there is none). */
  opening(index: number): number {
    return this.partner[index] ?? -1;
  }

  /** The last token of the template string starting at `first`. */
  templateEnd(first: number): number {
    let index = first;
    while (this.kind(index) === Tok.TemplateStringPart || this.kind(index) === Tok.RawTemplateStringPart) {
      const close = this.closing(index);
      if (close === index) return index;
      index = close + 1;
    }
    return index;
  }

  /** Whether the `(` at `index` groups a term rather than opening a call's arguments. */
  private isGrouping(index: number): boolean {
    if (index === 0 || this.flags(index) & WS_BEFORE) return true;
    const before = this.kind(index - 1);
    return !(CALLABLE.has(before) || isWordToken(before));
  }

  /** The tokens `first`…`last` widened over the grouping parentheses that directly enclose them. */
  parenthesized(first: number, last: number): [number, number] {
    let a = first;
    let b = last;
    while (this.kind(a - 1) === Tok.LParen && this.partner[a - 1] === b + 1 && this.isGrouping(a - 1)) {
      a--;
      b++;
    }
    return [a, b];
  }
}

/** Keyword tokens, which OPA accepts as names in refs (`input.not(x)` is a call). */
function isWordToken(kind: number): boolean {
  return (
    (kind >= Tok.Package && kind <= Tok.False) ||
    kind === Tok.Every ||
    kind === Tok.Contains ||
    kind === Tok.If ||
    kind === Tok.In
  );
}
