/**
 * A Code Mode program's source → JavaScript QuickJS can run: the body wrapped in an async function
 * (so it may `await` and `return`), TypeScript types stripped by sucrase (no type check: the types
 * are the model's notes, the gateway checks arguments against the contracts). Sucrase keeps line
 * numbers, so a location in the output is one in the program (the wrapper's opening shares line 1).
 */

/** The wrapper's opening, on the program's first line; the program is this function's body. */
const OPENING = "(async function program() {";
/** The wrapper's end, on a line of its own so a trailing `//` comment cannot swallow it. */
const CLOSING = "\n})";

/** A syntax error's position in the program as the model wrote it (1-based). */
export interface SourceLocation {
  line: number;
  column: number;
}

export type Transpiled =
  | { ok: true; code: string }
  | { ok: false; message: string; location?: SourceLocation };

/** The source file name QuickJS reports in stacks and syntax errors. */
export const PROGRAM_FILE = "program.ts";

const CACHE_ENTRIES = 64;
/** Longer programs are transpiled every time rather than held in the cache. */
const CACHE_MAX_SOURCE = 64 * 1024;
const cache = new Map<string, Transpiled>();

type SucraseTransform = typeof import("sucrase").transform;
let sucrase: Promise<SucraseTransform> | undefined;

/** The program as an async function expression, or the syntax error sucrase found. */
export async function transpileProgram(source: string): Promise<Transpiled> {
  const cached = cache.get(source);
  if (cached !== undefined) {
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    cache.delete(source);
    cache.set(source, cached);
    return cached;
  }
  sucrase ??= import("sucrase").then((module) => module.transform);
  const transform = await sucrase;
  const result = strip(transform, source);
  if (source.length <= CACHE_MAX_SOURCE) {
    cache.set(source, result);
    if (cache.size > CACHE_ENTRIES) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
  }
  return result;
}

function strip(transform: SucraseTransform, source: string): Transpiled {
  try {
    const { code } = transform(OPENING + source + CLOSING, {
      transforms: ["typescript"],
      disableESTransforms: true,
      production: true,
    });
    return { ok: true, code };
  } catch (error) {
    const location = locationOf(error);
    const message = error instanceof Error ? error.message.replace(/\s*\(\d+:\d+\)$/, "") : String(error);
    return location === undefined ? { ok: false, message } : { ok: false, message, location };
  }
}

/** Sucrase's `loc` on its SyntaxError, moved from the wrapped text into the program. */
function locationOf(error: unknown): SourceLocation | undefined {
  if (typeof error !== "object" || error === null || !("loc" in error)) return undefined;
  const loc = error.loc;
  if (typeof loc !== "object" || loc === null || !("line" in loc) || !("column" in loc)) return undefined;
  const { line, column } = loc;
  if (typeof line !== "number" || typeof column !== "number") return undefined;
  return programLocation(line, column);
}

/** A 1-based line and column in the wrapped text → the same place in the program. */
export function programLocation(line: number, column: number): SourceLocation {
  return { line, column: line === 1 ? Math.max(1, column - OPENING.length) : column };
}

/** "message at line L, column C" (or the message alone when the position is unknown). */
export function describeSyntaxError(message: string, location: SourceLocation | undefined): string {
  if (location === undefined) return `syntax error: ${message}`;
  return `syntax error at line ${location.line}, column ${location.column}: ${message}`;
}
