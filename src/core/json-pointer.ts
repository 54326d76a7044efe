/** RFC 6901 JSON Pointers: `/a/b`, with `~1` for `/` and `~0` for `~` inside a token. */

/** The reference tokens of `pointer`, unescaped; undefined when it is not a JSON Pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === "") return [];
  if (!pointer.startsWith("/") || /~(?![01])/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The pointer made of `tokens` (each escaped). */
export function formatPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${token.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
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
