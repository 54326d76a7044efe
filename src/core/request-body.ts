/** Reading a request body, with the failure that is the caller's said as such. */
import { WritError } from "./errors.ts";

/** Refuses ill-formed UTF-8 rather than replacing it with U+FFFD (which `Request.text()` does). */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A request's body as text: its bytes decoded as UTF-8, strictly. A body that is not well-formed
 * UTF-8 is refused (`invalid_argument`, naming the byte offset of the first ill-formed sequence),
 * never processed with replacement characters in it: what was decided and logged must be what
 * was sent. A body that never arrives whole (the client went away, or sent it slower than the
 * server's request timeout) is the caller's failure, not Writ's: an `invalid_argument` too.
 */
export async function bodyText(req: Request): Promise<string> {
  let bytes: ArrayBuffer;
  try {
    bytes = await req.arrayBuffer();
  } catch (error) {
    throw bodyNotWhole(error);
  }
  return decodeUtf8(new Uint8Array(bytes));
}

/** `bytes` as text, or `invalid_argument` naming where they stop being UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    const offset = firstIllFormed(bytes);
    throw new WritError("invalid_argument", `the request body is not UTF-8: byte ${offset} is ill-formed`, {
      fieldErrors: [{ path: "", message: `ill-formed UTF-8 at byte offset ${offset}` }],
      suggestedFix: "send the body encoded as UTF-8 (JSON text is UTF-8); escape other data, e.g. as base64",
    });
  }
}

/**
 * The offset of the first byte of the first ill-formed sequence (Unicode's table of well-formed
 * UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF, no sequence cut short);
 * `bytes.length` when there is none.
 */
export function firstIllFormed(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const form = sequenceOf(lead);
    if (form === undefined || i + form.length > bytes.length) return i;
    const second = bytes[i + 1] ?? 0;
    if (second < form.low || second > form.high) return i;
    for (let k = 2; k < form.length; k++) {
      const next = bytes[i + k] ?? 0;
      if (next < 0x80 || next > 0xbf) return i;
    }
    i += form.length;
  }
  return bytes.length;
}

/** The length of a sequence a lead byte starts, and the range its second byte must be in. */
function sequenceOf(lead: number): { length: number; low: number; high: number } | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 2, low: 0x80, high: 0xbf };
  if (lead === 0xe0) return { length: 3, low: 0xa0, high: 0xbf };
  if (lead === 0xed) return { length: 3, low: 0x80, high: 0x9f };
  if (lead >= 0xe1 && lead <= 0xef) return { length: 3, low: 0x80, high: 0xbf };
  if (lead === 0xf0) return { length: 4, low: 0x90, high: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 4, low: 0x80, high: 0xbf };
  if (lead === 0xf4) return { length: 4, low: 0x80, high: 0x8f };
  return undefined;
}

/** The caller's failure to send a whole body (`error`, the reading's failure, is its cause). */
export function bodyNotWhole(error: unknown): WritError {
  if (error instanceof WritError) return error;
  return new WritError("invalid_argument", "the request body did not arrive whole", {
    suggestedFix: "send the whole body at once, within the server's request timeout",
    cause: error,
  });
}
