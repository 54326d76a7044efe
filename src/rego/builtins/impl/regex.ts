/**
 * The regular-expression builtins (`regex.*`, `re_match`), following OPA's `v1/topdown/regex.go`
 * and `regex_template.go`. OPA's patterns are Go RE2: every pattern is compiled with `re2js`
 * (RE2 syntax, linear-time matching), never with a JavaScript `RegExp`, so a policy cannot make
 * the gateway backtrack. Compiled patterns (and the errors of invalid ones) are kept in a
 * bounded LRU cache.
 *
 * `regex.globs_match` is the algorithm of github.com/yashtewari/glob-intersection, which OPA uses.
 */
import { RE2JS, RE2JSException } from "re2js";
import { goQuote, makeArray, makeBoolean, type Value } from "../../plan/value.ts";
import { BuiltinError, define, fail, intArg, str, stringArg } from "../registry.ts";

// ------------------------------------------------------------------------------------ cache

/** A map that keeps its `capacity` most recently used entries. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K, compute: (key: K) => V): V {
    if (this.entries.has(key)) {
      const value = this.entries.get(key) as V;
      this.entries.delete(key);
      this.entries.set(key, value);
      return value;
    }
    const value = compute(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A compiled pattern, or Go's error message for an invalid one. */
export type CompiledRegex = { readonly re: RE2JS } | { readonly error: string };

const REGEX_CACHE_SIZE = 1000;
const regexCache = new LruCache<string, CompiledRegex>(REGEX_CACHE_SIZE);

function compileUncached(pattern: string): CompiledRegex {
  try {
    return { re: RE2JS.compile(pattern) };
  } catch (e) {
    if (e instanceof RE2JSException) return { error: e.message };
    throw e;
  }
}

/** Go's `regexp.Compile`, cached. */
export function compileRegex(pattern: string): CompiledRegex {
  return regexCache.get(pattern, compileUncached);
}

/** The compiled pattern, or the builtin error `error parsing regexp: …` as Go reports it. */
export function regexOrFail(pattern: string): RE2JS {
  const compiled = compileRegex(pattern);
  if ("error" in compiled) return fail(compiled.error);
  return compiled.re;
}

// ------------------------------------------------------------------------------------ matching

/** Submatch positions (UTF-16 offsets, -1 for an unmatched group) of one match. */
type Submatch = number[];

function isPositions(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === "number");
}

/** Go's `FindAllStringSubmatchIndex(s, n)`. */
function findAllSubmatchIndex(re: RE2JS, s: string, n: number): Submatch[] {
  if (n === 0) return [];
  const found: unknown = re.re2().findAllSubmatchIndex(s, n < 0 ? -1 : n);
  if (!Array.isArray(found)) return [];
  return found.filter(isPositions);
}

/** Go's `FindAllStringIndex(s, n)`. */
function findAllIndex(re: RE2JS, s: string, n: number): Submatch[] {
  if (n === 0) return [];
  const found: unknown = re.re2().findAllIndex(s, n < 0 ? -1 : n);
  if (!Array.isArray(found)) return [];
  return found.filter(isPositions);
}

/** The leftmost match at or after `pos` (the whole of `s` as context), with its submatches. */
function findSubmatchFrom(re: RE2JS, s: string, pos: number): Submatch | undefined {
  const ngroup = re.groupCount() + 1;
  const result: unknown = re.re2().matchWithGroup(s, pos, s.length, 0, ngroup);
  if (!Array.isArray(result) || result[0] !== true) return undefined;
  const groups: unknown = result[1];
  if (!isPositions(groups)) return undefined;
  const out = groups.slice(0, 2 * ngroup);
  while (out.length < 2 * ngroup) out.push(-1);
  return out;
}

/** The UTF-16 width of the code point at `i` (1 at the end, as Go's `searchPos++`). */
function widthAt(s: string, i: number): number {
  const cp = s.codePointAt(i);
  return cp !== undefined && cp > 0xffff ? 2 : 1;
}

/** Go's `Regexp.Split(s, -1)`. */
function regexSplit(re: RE2JS, pattern: string, s: string): string[] {
  if (pattern !== "" && s === "") return [""];
  const parts: string[] = [];
  let beg = 0;
  let end = 0;
  for (const [start = 0, stop = 0] of findAllIndex(re, s, -1)) {
    end = start;
    if (stop !== 0) parts.push(s.slice(beg, end));
    beg = stop;
  }
  if (end !== s.length) parts.push(s.slice(beg));
  return parts;
}

const LETTER_OR_DIGIT = /[\p{L}\p{Nd}_]/u;

/** Go's `extract` for `Regexp.Expand`: a `$name`/`${name}` reference at the start of `t`. */
function extractReference(t: string): { name: string; num: number; rest: string } | undefined {
  let s = t;
  const brace = s.startsWith("{");
  if (brace) s = s.slice(1);
  let i = 0;
  for (const ch of s) {
    if (!LETTER_OR_DIGIT.test(ch)) break;
    i += ch.length;
  }
  if (i === 0) return undefined;
  const name = s.slice(0, i);
  if (brace) {
    if (s[i] !== "}") return undefined;
    i++;
  }
  let num = 0;
  for (const c of name) {
    if (c < "0" || c > "9" || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + Number(c);
  }
  if (name[0] === "0" && name.length > 1) num = -1;
  return { name, num, rest: s.slice(i) };
}

/** Go's `Regexp.ExpandString(nil, template, src, match)`. */
function expand(re: RE2JS, template: string, src: string, match: Submatch): string {
  let out = "";
  let t = template;
  const names = re.namedGroups();
  for (;;) {
    const dollar = t.indexOf("$");
    if (dollar < 0) break;
    out += t.slice(0, dollar);
    t = t.slice(dollar + 1);
    if (t.startsWith("$")) {
      out += "$";
      t = t.slice(1);
      continue;
    }
    const ref = extractReference(t);
    if (!ref) {
      out += "$";
      continue;
    }
    t = ref.rest;
    const group = ref.num >= 0 ? ref.num : Object.hasOwn(names, ref.name) ? names[ref.name] : undefined;
    if (group === undefined) continue;
    const start = match[2 * group];
    const end = match[2 * group + 1];
    if (start !== undefined && end !== undefined && start >= 0) out += src.slice(start, end);
  }
  return out + t;
}

/** Go's `Regexp.ReplaceAllString(src, repl)`. */
function replaceAll(re: RE2JS, src: string, repl: string): string {
  let out = "";
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= src.length) {
    const a = findSubmatchFrom(re, src, searchPos);
    if (!a) break;
    const [start = 0, end = 0] = a;
    out += src.slice(lastMatchEnd, start);
    if (end > lastMatchEnd || start === 0) out += expand(re, repl, src, a);
    lastMatchEnd = end;
    const width = searchPos < src.length ? widthAt(src, searchPos) : 1;
    searchPos = Math.max(searchPos + width, end);
  }
  return out + src.slice(lastMatchEnd);
}

// ------------------------------------------------------------------------------------ template_match

/** OPA's `delimiterIndices`: the first-level delimiter positions, or an error if unbalanced. */
function delimiterIndices(s: string, open: string, close: string): number[] {
  let level = 0;
  let idx = 0;
  const idxs: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === open) {
      level++;
      if (level === 1) idx = i;
    } else if (c === close) {
      level--;
      if (level === 0) idxs.push(idx, i + 1);
      else if (level < 0) fail(`unbalanced braces in ${goQuote(s)}`);
    }
  }
  if (level !== 0) fail(`unbalanced braces in ${goQuote(s)}`);
  return idxs;
}

/** OPA's `compileRegexTemplate`: literal text quoted, `{…}` parts kept as patterns. */
function compileRegexTemplate(template: string, open: string, close: string): RE2JS {
  const idxs = delimiterIndices(template, open, close);
  let pattern = "^";
  let end = 0;
  for (let i = 0; i < idxs.length; i += 2) {
    const from = idxs[i] ?? 0;
    const raw = template.slice(end, from);
    end = idxs[i + 1] ?? 0;
    const part = template.slice(from + 1, end - 1);
    pattern += `${RE2JS.quote(raw)}(${part})`;
    regexOrFail(`^${part}$`);
  }
  pattern += `${RE2JS.quote(template.slice(end))}$`;
  return regexOrFail(pattern);
}

const templateCache = new LruCache<string, CompiledRegex>(REGEX_CACHE_SIZE);

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

// ------------------------------------------------------------------------------------ glob intersection

enum TokenType {
  Character = 0,
  Dot = 1,
  Set = 2,
}

enum Flag {
  None = 0,
  Plus = 1,
  Star = 2,
}

interface GlobToken {
  readonly type: TokenType;
  flag: Flag;
  /** The rune of a character. */
  readonly rune?: number;
  /** The runes of a set. */
  readonly runes?: ReadonlySet<number>;
}

function invalidGlob(input: readonly number[], index: number, message: string): never {
  return fail(
    `input:${String.fromCodePoint(...input)}, pos:${index}, ${message}: the input provided is invalid`,
  );
}

type NextRune = { index: number; rune: number; escaped: boolean } | "end";

/** gintersect's `nextRune`: one rune, `\` escaping the next. */
function nextRune(index: number, input: readonly number[]): NextRune {
  if (index >= input.length) return "end";
  const r = input[index] ?? 0;
  if (r === 0x5c) {
    if (index < input.length - 1) return { index: index + 2, rune: input[index + 1] ?? 0, escaped: true };
    return invalidGlob(input, index, "input ends with a \\ (escape) character");
  }
  return { index: index + 1, rune: r, escaped: false };
}

function tokenizeSet(start: number, input: readonly number[]): { index: number; token: GlobToken } {
  const runes = new Set<number>();
  let prev = 0;
  let prevExists = false;
  let complete = false;
  let index = start;
  for (let next = nextRune(index, input); next !== "end"; next = nextRune(index, input)) {
    index = next.index;
    const r = next.rune;
    if (!next.escaped && r === 0x2d /* - */) {
      if (!prevExists)
        invalidGlob(input, index, "range character '-' must be preceded by a Unicode character");
      if (index >= input.length - 1)
        invalidGlob(input, index, "range character '-' must be followed by a Unicode character");
      const hi = nextRune(index, input);
      if (hi === "end") return invalidGlob(input, index, "found [ without matching ]");
      index = hi.index;
      if (!hi.escaped && (hi.rune === 0x5d || hi.rune === 0x2d))
        invalidGlob(input, index, "range character '-' cannot be followed by a special symbol");
      if (hi.rune < prev)
        invalidGlob(
          input,
          index,
          `range is out of order: '${String.fromCodePoint(hi.rune)}' comes before '${String.fromCodePoint(prev)}' in Unicode`,
        );
      for (let x = prev; x <= hi.rune; x++) runes.add(x);
      prevExists = false;
    } else if (!next.escaped && r === 0x5d /* ] */) {
      complete = true;
      break;
    } else {
      runes.add(r);
      prev = r;
      prevExists = true;
    }
  }
  if (!complete) invalidGlob(input, index, "found [ without matching ]");
  return { index, token: { type: TokenType.Set, flag: Flag.None, runes } };
}

/** gintersect's `Tokenize`: characters, `.`, `[…]` sets, each optionally followed by `+` or `*`. */
function tokenizeGlob(text: string): GlobToken[] {
  const input = Array.from(text, (c) => c.codePointAt(0) ?? 0);
  const tokens: GlobToken[] = [];
  let index = 0;
  for (let next = nextRune(index, input); next !== "end"; next = nextRune(index, input)) {
    index = next.index;
    let token: GlobToken;
    const r = next.rune;
    if (next.escaped) token = { type: TokenType.Character, flag: Flag.None, rune: r };
    else if (r === 0x2e /* . */) token = { type: TokenType.Dot, flag: Flag.None };
    else if (r === 0x5d /* ] */) return invalidGlob(input, index, "set-close ']' with no preceding '['");
    else if (r === 0x5b /* [ */) {
      const set = tokenizeSet(index, input);
      index = set.index;
      token = set.token;
    } else if (r === 0x2b || r === 0x2a)
      return invalidGlob(input, index, `flag '${String.fromCodePoint(r)}' must be preceded by a non-flag`);
    else token = { type: TokenType.Character, flag: Flag.None, rune: r };
    const flag = nextRune(index, input);
    if (flag !== "end" && !flag.escaped && (flag.rune === 0x2b || flag.rune === 0x2a)) {
      token.flag = flag.rune === 0x2b ? Flag.Plus : Flag.Star;
      index = flag.index;
    }
    tokens.push(token);
  }
  return tokens;
}

function tokensEqual(a: GlobToken, b: GlobToken): boolean {
  if (a.type !== b.type) return false;
  if (a.type === TokenType.Character) return a.rune === b.rune;
  if (a.type === TokenType.Set) {
    const ra = a.runes ?? new Set<number>();
    const rb = b.runes ?? new Set<number>();
    return ra.size === rb.size && [...ra].every((r) => rb.has(r));
  }
  return true;
}

/** gintersect's `Simplify`: adjacent equal flagged tokens merge (`+` wins over `*`). */
function simplifyGlob(tokens: GlobToken[]): GlobToken[] {
  if (tokens.length === 0) return tokens;
  const first = tokens[0] as GlobToken;
  const simple = [first];
  let latest = first;
  for (const t of tokens.slice(1)) {
    if (t.flag !== Flag.None && latest.flag !== Flag.None && tokensEqual(t, latest)) {
      const last = simple[simple.length - 1] as GlobToken;
      last.flag = t.flag === Flag.Plus || latest.flag === Flag.Plus ? Flag.Plus : Flag.Star;
      continue;
    }
    latest = t;
    simple.push(t);
  }
  return simple;
}

/** gintersect's `Match`: whether two tokens have a rune in common. */
function tokensMatch(t1: GlobToken, t2: GlobToken): boolean {
  const [a, b] = t1.type > t2.type ? [t2, t1] : [t1, t2];
  if (a.type === TokenType.Character) {
    if (b.type === TokenType.Character) return a.rune === b.rune;
    if (b.type === TokenType.Dot) return true;
    return b.runes?.has(a.rune ?? -1) ?? false;
  }
  if (a.type === TokenType.Dot) return true;
  const rb = b.runes ?? new Set<number>();
  for (const r of a.runes ?? []) if (rb.has(r)) return true;
  return false;
}

type Glob = readonly GlobToken[];

function at(g: Glob, i: number): GlobToken {
  const t = g[i];
  if (t === undefined) throw new RangeError("glob index out of range");
  return t;
}

/** gintersect's `trimGlobs`: strips matching unflagged prefixes and suffixes. */
function trimGlobs(g1: Glob, g2: Glob): [Glob, Glob] | undefined {
  let l = 0;
  for (; l < g1.length && l < g2.length && at(g1, l).flag === Flag.None && at(g2, l).flag === Flag.None; l++)
    if (!tokensMatch(at(g1, l), at(g2, l))) return undefined;
  if (l > 0) l--;
  let r1 = g1.length - 1;
  let r2 = g2.length - 1;
  for (
    ;
    r1 >= 0 &&
    r1 >= l &&
    r2 >= 0 &&
    r2 >= l &&
    at(g1, r1).flag === Flag.None &&
    at(g2, r2).flag === Flag.None;
    r1--, r2--
  )
    if (!tokensMatch(at(g1, r1), at(g2, r2))) return undefined;
  if (r1 < g1.length - 1) {
    r1++;
    r2++;
  }
  return [g1.slice(l, r1 + 1), g2.slice(l, r2 + 1)];
}

function intersectNormal(g1: Glob, g2: Glob): boolean {
  let i = 0;
  let j = 0;
  for (; i < g1.length && j < g2.length; i++, j++) {
    if (at(g1, i).flag === Flag.None && at(g2, j).flag === Flag.None) {
      if (!tokensMatch(at(g1, i), at(g2, j))) return false;
    } else return intersectSpecial(g1.slice(i), g2.slice(j));
  }
  return i === g1.length && j === g2.length;
}

function intersectSpecial(g1: Glob, g2: Glob): boolean {
  const f1 = at(g1, 0).flag;
  if (f1 !== Flag.None) return f1 === Flag.Plus ? intersectPlus(g1, g2) : intersectStar(g1, g2);
  const f2 = at(g2, 0).flag;
  if (f2 === Flag.Plus) return intersectPlus(g2, g1);
  if (f2 === Flag.Star) return intersectStar(g2, g1);
  return false;
}

function intersectPlus(plussed: Glob, other: Glob): boolean {
  if (!tokensMatch(at(plussed, 0), at(other, 0))) return false;
  if (intersectStar(plussed, other.slice(1))) return true;
  return at(other, 0).flag !== Flag.None && intersectNormal(plussed.slice(1), other);
}

function intersectStar(starred: Glob, other: Glob): boolean {
  const starToken = at(starred, 0);
  const nextToken = starred[1];
  for (let i = 0; i < other.length; i++) {
    const t = at(other, i);
    if (nextToken !== undefined && tokensMatch(t, nextToken)) {
      if (intersectNormal(starred.slice(1), other.slice(i))) return true;
      if (!tokensMatch(t, starToken)) return false;
    } else if (!tokensMatch(t, starToken)) return false;
  }
  return nextToken === undefined;
}

/** gintersect's `NonEmpty`: whether the two globs match a common non-empty string. */
export function globsIntersect(lhs: string, rhs: string): boolean {
  const g1 = simplifyGlob(tokenizeGlob(lhs));
  const g2 = simplifyGlob(tokenizeGlob(rhs));
  const trimmed = trimGlobs(g1, g2);
  if (!trimmed) return false;
  try {
    return intersectNormal(trimmed[0], trimmed[1]);
  } catch (e) {
    // Go would panic on an out-of-range slice here; OPA reports the panic as an error.
    if (e instanceof RangeError) return fail(e.message);
    throw e;
  }
}

// ------------------------------------------------------------------------------------ builtins

function regexMatch(args: readonly Value[]): Value {
  const pattern = stringArg(args, 0);
  const s = stringArg(args, 1);
  return makeBoolean(regexOrFail(pattern).test(s));
}

define("regex.match", regexMatch);
define("re_match", regexMatch);

define("regex.is_valid", (args) => {
  const v = args[0];
  return makeBoolean(v?.type === "string" && !("error" in compileRegex(v.value)));
});

define("regex.split", (args) => {
  const pattern = stringArg(args, 0);
  const s = stringArg(args, 1);
  return makeArray(regexSplit(regexOrFail(pattern), pattern, s).map(str));
});

define("regex.find_n", (args) => {
  const pattern = stringArg(args, 0);
  const s = stringArg(args, 1);
  const n = intArg(args, 2);
  const re = regexOrFail(pattern);
  return makeArray(findAllIndex(re, s, n).map(([a = 0, b = 0]) => str(s.slice(a, b))));
});

define("regex.find_all_string_submatch_n", (args) => {
  const pattern = stringArg(args, 0);
  const s = stringArg(args, 1);
  const n = intArg(args, 2);
  const re = regexOrFail(pattern);
  return makeArray(
    findAllSubmatchIndex(re, s, n).map((m) => {
      const groups: Value[] = [];
      for (let g = 0; g + 1 < m.length; g += 2) {
        const a = m[g] ?? -1;
        const b = m[g + 1] ?? -1;
        groups.push(str(a >= 0 ? s.slice(a, b) : ""));
      }
      return makeArray(groups);
    }),
  );
});

define("regex.replace", (args) => {
  const base = stringArg(args, 0);
  const pattern = stringArg(args, 1);
  const value = stringArg(args, 2);
  return str(replaceAll(regexOrFail(pattern), base, value));
});

define("regex.template_match", (args) => {
  const pattern = stringArg(args, 0);
  const match = stringArg(args, 1);
  const start = stringArg(args, 2);
  const end = stringArg(args, 3);
  if (utf8Length(start) !== 1)
    fail(`start delimiter has to be exactly one character long but is ${utf8Length(start)} long`);
  if (utf8Length(end) !== 1)
    fail(`end delimiter has to be exactly one character long but is ${utf8Length(start)} long`);
  const key = `${start}${end}${pattern}`;
  const compiled = templateCache.get(key, () => {
    try {
      return { re: compileRegexTemplate(pattern, start, end) };
    } catch (e) {
      if (e instanceof BuiltinError) return { error: e.message };
      throw e;
    }
  });
  if ("error" in compiled) return fail(compiled.error);
  return makeBoolean(compiled.re.test(match));
});

define("regex.globs_match", (args) => {
  const s1 = stringArg(args, 0);
  const s2 = stringArg(args, 1);
  return makeBoolean(globsIntersect(s1, s2));
});
