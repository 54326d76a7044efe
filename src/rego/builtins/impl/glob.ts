/**
 * The glob builtins (`glob.match`, `glob.quote_meta`), following OPA's `v1/topdown/glob.go`
 * and the syntax of github.com/gobwas/glob. A glob is compiled to an RE2 pattern and matched
 * with `re2js` (linear time, no backtracking); compiled globs are kept in a bounded LRU cache.
 */
import type { RE2JS } from "re2js";
import { codePointLength, goQuote, makeBoolean, type Value } from "../../plan/value.ts";
import { arg, define, elementError, fail, str, stringArg, typeError } from "../registry.ts";
import { compileRegex, LruCache } from "./regex.ts";

/** One code point as an RE2 escape (valid inside and outside a class). */
function re2Char(ch: string): string {
  return /^[A-Za-z0-9]$/.test(ch) ? ch : `\\x{${(ch.codePointAt(0) ?? 0).toString(16)}}`;
}

/**
 * Compiles gobwas/glob syntax (`*`, `**`, `?`, `[a-z]`, `[!…]`, `{a,b}`, `\` escapes) to an
 * anchored RE2 pattern; undefined when the glob is invalid.
 */
class GlobCompiler {
  private pos = 0;
  private readonly chars: string[];
  private readonly nonSeparator: string;

  constructor(pattern: string, separators: readonly string[]) {
    this.chars = Array.from(pattern);
    this.nonSeparator = separators.length === 0 ? "(?s:.)" : `[^${separators.map(re2Char).join("")}]`;
  }

  compile(): string | undefined {
    const source = this.sequence(false);
    if (source === undefined || this.pos !== this.chars.length) return undefined;
    return `^(?:${source})$`;
  }

  private sequence(inAlternatives: boolean): string | undefined {
    let out = "";
    while (this.pos < this.chars.length) {
      const c = this.chars[this.pos] ?? "";
      if (inAlternatives && (c === "," || c === "}")) break;
      const part = this.element(c);
      if (part === undefined) return undefined;
      out += part;
    }
    return out;
  }

  private element(c: string): string | undefined {
    this.pos++;
    switch (c) {
      case "*":
        if (this.chars[this.pos] === "*") {
          this.pos++;
          return "(?s:.)*";
        }
        return `${this.nonSeparator}*`;
      case "?":
        return this.nonSeparator;
      case "[":
        return this.charClass();
      case "{":
        return this.alternatives();
      case "\\": {
        const next = this.chars[this.pos++];
        return next === undefined ? undefined : re2Char(next);
      }
      default:
        return re2Char(c);
    }
  }

  private charClass(): string | undefined {
    const negate = this.chars[this.pos] === "!";
    if (negate) this.pos++;
    let body = "";
    while (this.pos < this.chars.length && this.chars[this.pos] !== "]") {
      const lo = this.chars[this.pos++] ?? "";
      const hi = this.chars[this.pos + 1];
      if (this.chars[this.pos] === "-" && hi !== undefined && hi !== "]") {
        this.pos += 2;
        if ((hi.codePointAt(0) ?? 0) < (lo.codePointAt(0) ?? 0)) return undefined;
        body += `${re2Char(lo)}-${re2Char(hi)}`;
      } else body += re2Char(lo);
    }
    if (this.chars[this.pos] !== "]" || body === "") return undefined;
    this.pos++;
    return `[${negate ? "^" : ""}${body}]`;
  }

  private alternatives(): string | undefined {
    const alts: string[] = [];
    for (;;) {
      const alt = this.sequence(true);
      if (alt === undefined) return undefined;
      alts.push(alt);
      const c = this.chars[this.pos++];
      if (c === "}") return `(?:${alts.join("|")})`;
      if (c !== ",") return undefined;
    }
  }
}

const globCache = new LruCache<string, RE2JS | undefined>(1000);

/**
 * A gobwas/glob pattern compiled (cached); `separators` are the characters `*` and `?` do not
 * cross (none: `*` matches anything). Undefined when the pattern is invalid.
 */
export function compileGlob(pattern: string, separators: readonly string[]): RE2JS | undefined {
  return globCache.get(`${pattern}\u0000${separators.join("")}`, () => {
    const source = new GlobCompiler(pattern, separators).compile();
    if (source === undefined) return undefined;
    const compiled = compileRegex(source);
    return "re" in compiled ? compiled.re : undefined;
  });
}

function globMatch(args: readonly Value[]): Value {
  const pattern = stringArg(args, 0);
  const delims = arg(args, 1);
  let separators: string[];
  if (delims.type === "null") separators = [];
  else if (delims.type === "array") {
    separators = delims.items.map((x) => {
      if (x.type !== "string") return elementError(2, delims, x, "string");
      if (codePointLength(x.value) !== 1) return elementError(2, delims, x, "rune");
      return x.value;
    });
    if (separators.length === 0) separators = ["."];
  } else return typeError(2, delims, "array", "null");
  const subject = stringArg(args, 2);
  const re = compileGlob(pattern, separators);
  if (!re) fail(`invalid glob pattern ${goQuote(pattern)}`);
  return makeBoolean(re.matches(subject));
}

const GLOB_SPECIALS = new Set(["*", "?", "\\", "[", "]", "{", "}"]);

/** gobwas/glob's `QuoteMeta`: a backslash before each of `*?\[]{}`. */
export function globQuoteMeta(s: string): string {
  let out = "";
  for (const c of s) out += GLOB_SPECIALS.has(c) ? `\\${c}` : c;
  return out;
}

define("glob.match", globMatch);
define("glob.quote_meta", (args) => str(globQuoteMeta(stringArg(args, 0))));
