/**
 * Go's `strconv.Quote`, which OPA's `String()` of a string term uses. `opa fmt` writes a string
 * with it wherever it does not copy the literal from the source (bracketed ref operands such as
 * `a["b-c"]`, keys made from dotted heads), so the escapes must be Go's, not JSON's: `\x00`
 * rather than `\u0000`, `\a` and `\v`, printable non-ASCII characters as they are.
 */

const SHORT_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x07, "\\a"],
  [0x08, "\\b"],
  [0x0c, "\\f"],
  [0x0a, "\\n"],
  [0x0d, "\\r"],
  [0x09, "\\t"],
  [0x0b, "\\v"],
  [0x22, '\\"'],
  [0x5c, "\\\\"],
]);

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

/** `value` as a double-quoted Go string literal. */
export function goQuote(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    const short = SHORT_ESCAPES.get(code);
    if (short !== undefined) out += short;
    else if (PRINTABLE.test(char)) out += char;
    else if (code < 0x80) out += `\\x${hex(code, 2)}`;
    else if (code >= 0xd800 && code <= 0xdfff)
      out += "\ufffd"; // decoding made it U+FFFD, printable
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return `${out}"`;
}
