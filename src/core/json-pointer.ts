/** RFC 6901 JSON Pointers: `/a/b`, with `~1` for `/` and `~0` for `~` inside a token. */

/** One reference token as a pointer spells it: `~` as `~0`, then `/` as `~1`. */
export function escapeToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** One reference token as it names a key: `~1` as `/`, then `~0` as `~` (the reverse order of escaping). */
export function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** The reference tokens of `pointer`, unescaped; undefined when it is not a JSON Pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  return pointer.slice(1).split("/").map(unescapeToken);
}

/** The pointer made of `tokens` (each escaped); numbers are array indexes. */
export function formatPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${escapeToken(String(token))}`).join("");
}

/** Array index tokens: `0` or digits without a leading zero (`-`, the end of the array, holds no value). */
const arrayIndex = /^(0|[1-9][0-9]*)$/;

export type PointerLookup = { found: true; value: unknown } | { found: false };

/** The value `pointer` refers to in `document` (own properties only), or `{found: false}`. */
export function resolvePointer(document: unknown, pointer: string): PointerLookup {
  const tokens = parsePointer(pointer);
  if (tokens === undefined) return { found: false };
  let current = document;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!arrayIndex.test(token)) return { found: false };
      const index = Number(token);
      if (index >= current.length) return { found: false };
      current = current[index];
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, token)) {
      current = Reflect.get(current, token);
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

/** The value at `pointer`, or undefined when there is none (or `pointer` is not a JSON Pointer). */
export function atPointer(document: unknown, pointer: string): unknown {
  const lookup = resolvePointer(document, pointer);
  return lookup.found ? lookup.value : undefined;
}
