/**
 * Go's `encoding/pem` and `encoding/base64` decoding, as OPA's JWT and X.509 builtins see them:
 * the same blocks found, the same leftovers reported, the same `illegal base64 data at input
 * byte N` offsets.
 */

const STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function decodeMap(alphabet: string): Int16Array {
  const map = new Int16Array(256).fill(-1);
  for (let i = 0; i < alphabet.length; i++) map[alphabet.charCodeAt(i)] = i;
  return map;
}

const STD_MAP = decodeMap(STD);
const URL_MAP = decodeMap(URL);

/** Go's `base64.CorruptInputError`. */
export class Base64Error extends Error {
  constructor(readonly offset: number) {
    super(`illegal base64 data at input byte ${offset}`);
  }
}

const isNewline = (b: number | undefined): boolean => b === 0x0a || b === 0x0d;

/**
 * Go's padded `base64.Encoding.Decode` (not strict): `\r` and `\n` are skipped anywhere, a
 * wrong character, missing or misplaced padding, or trailing data raise {@link Base64Error}.
 */
export function goBase64Decode(src: Uint8Array, url: boolean): Buffer {
  const map = url ? URL_MAP : STD_MAP;
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let end = false;
    for (let j = 0; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Buffer.from(out);
        throw new Base64Error(si - j);
      }
      const inb = src[si] ?? 0;
      si++;
      const v = map[inb] ?? -1;
      if (v >= 0) {
        dbuf[j] = v;
        continue;
      }
      if (isNewline(inb)) {
        j--;
        continue;
      }
      if (inb !== 0x3d) throw new Base64Error(si - 1);
      // Padding: only after two or three characters of a quantum.
      if (j === 0 || j === 1) throw new Base64Error(si - 1);
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) throw new Base64Error(src.length);
        if (src[si] !== 0x3d) throw new Base64Error(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) throw new Base64Error(si);
      dlen = j;
      end = true;
      break;
    }
    const [a = 0, b = 0, c = 0, d = 0] = dbuf;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out.push((n >> 16) & 0xff);
    if (dlen >= 3) out.push((n >> 8) & 0xff);
    if (dlen >= 4) out.push(n & 0xff);
    if (end) break;
    // A quantum ended by newlines alone is complete; skip them before the next one.
    while (si < src.length && isNewline(src[si])) si++;
  }
  return Buffer.from(out);
}

/**
 * OPA's `base64url.decode` on bytes: unpadded input gets its padding first (RFC 7515
 * appendix C). Throws `Error` with OPA's message.
 */
export function base64UrlDecodeBytes(s: string): Buffer {
  let padded = s;
  if (!s.endsWith("=")) {
    const bytes = Buffer.byteLength(s, "utf8");
    switch (bytes % 4) {
      case 0:
        break;
      case 2:
        padded += "==";
        break;
      case 3:
        padded += "=";
        break;
      default:
        throw new Error(`illegal base64url string: ${s}`);
    }
  }
  return goBase64Decode(Buffer.from(padded, "utf8"), true);
}

export interface PemBlock {
  readonly type: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly bytes: Buffer;
}

const PEM_START = Buffer.from("\n-----BEGIN ");
const PEM_END = Buffer.from("\n-----END ");
const PEM_END_OF_LINE = Buffer.from("-----");

/** Go's `getLine`: the line without its end and trailing spaces/tabs/CRs, and the rest. */
function getLine(data: Buffer): [Buffer, Buffer] {
  let i = data.indexOf(0x0a);
  let j: number;
  if (i < 0) {
    i = data.length;
    j = i;
  } else {
    j = i + 1;
    if (i > 0 && data[i - 1] === 0x0d) i--;
  }
  let line = data.subarray(0, i);
  let k = line.length;
  while (k > 0 && (line[k - 1] === 0x20 || line[k - 1] === 0x09 || line[k - 1] === 0x0d)) k--;
  line = line.subarray(0, k);
  return [line, data.subarray(j)];
}

function removeSpacesAndTabs(data: Buffer): Buffer {
  return Buffer.from(data.filter((b) => b !== 0x20 && b !== 0x09));
}

function trimSpace(b: Buffer): string {
  return b.toString("latin1").replace(/^[ \t\r\n\v\f]+|[ \t\r\n\v\f]+$/g, "");
}

/**
 * Go's `pem.Decode`: the first PEM block in `data` and what follows it (after the END line),
 * or undefined when there is none.
 */
export function pemDecode(data: Buffer): { block: PemBlock; rest: Buffer } | undefined {
  let rest = data;
  for (;;) {
    if (rest.subarray(0, PEM_START.length - 1).equals(PEM_START.subarray(1))) {
      rest = rest.subarray(PEM_START.length - 1);
    } else {
      const i = rest.indexOf(PEM_START);
      if (i < 0) return undefined;
      rest = rest.subarray(i + PEM_START.length);
    }
    let typeLine: Buffer;
    [typeLine, rest] = getLine(rest);
    if (!typeLine.subarray(typeLine.length - PEM_END_OF_LINE.length).equals(PEM_END_OF_LINE)) continue;
    const type = typeLine.subarray(0, typeLine.length - PEM_END_OF_LINE.length).toString("latin1");

    const headers = new Map<string, string>();
    for (;;) {
      if (rest.length === 0) return undefined;
      const [line, next] = getLine(rest);
      const colon = line.indexOf(0x3a);
      if (colon < 0) break;
      headers.set(trimSpace(line.subarray(0, colon)), trimSpace(line.subarray(colon + 1)));
      rest = next;
    }

    let endIndex: number;
    let endTrailerIndex: number;
    if (headers.size === 0 && rest.subarray(0, PEM_END.length - 1).equals(PEM_END.subarray(1))) {
      endIndex = 0;
      endTrailerIndex = PEM_END.length - 1;
    } else {
      endIndex = rest.indexOf(PEM_END);
      endTrailerIndex = endIndex + PEM_END.length;
    }
    if (endIndex < 0) continue;

    const endTrailer = rest.subarray(endTrailerIndex);
    const endTrailerLen = type.length + PEM_END_OF_LINE.length;
    if (endTrailer.length < endTrailerLen) continue;
    const restOfEndLine = endTrailer.subarray(endTrailerLen);
    const trailer = endTrailer.subarray(0, endTrailerLen);
    if (
      trailer.subarray(0, type.length).toString("latin1") !== type ||
      !trailer.subarray(type.length).equals(PEM_END_OF_LINE)
    )
      continue;
    const [endLine, after] = getLine(restOfEndLine);
    if (endLine.length !== 0) continue;

    let bytes: Buffer;
    try {
      bytes = goBase64Decode(removeSpacesAndTabs(rest.subarray(0, endIndex)), false);
    } catch (e) {
      if (e instanceof Base64Error) continue;
      throw e;
    }
    return { block: { type, headers, bytes }, rest: after };
  }
}
