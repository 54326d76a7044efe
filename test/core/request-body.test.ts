/**
 * Reading a body as UTF-8, strictly (issue 27): the offset `decodeUtf8` names is where the
 * platform's own strict decoder stops, for any bytes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { decodeUtf8, firstIllFormed } from "../../src/core/request-body.ts";

const strict = new TextDecoder("utf-8", { fatal: true });
const wellFormed = (bytes: Uint8Array) => {
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

/** Bytes rich in lead, continuation and forbidden bytes, so ill-formed sequences of every kind turn up. */
const bytes = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 0x7f }),
      fc.integer({ min: 0x80, max: 0xbf }),
      fc.constantFrom(0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff),
    ),
    { maxLength: 24 },
  )
  .map((list) => Uint8Array.from(list));

describe("decodeUtf8", () => {
  it("refuses exactly what the strict decoder refuses, at the first ill-formed sequence", () => {
    fc.assert(
      fc.property(bytes, (input) => {
        const offset = firstIllFormed(input);
        expect(offset === input.length).toBe(wellFormed(input));
        // Everything before the offset is well-formed; the sequence at it never is, whatever follows.
        expect(wellFormed(input.subarray(0, offset))).toBe(true);
        if (offset < input.length) {
          expect(() => decodeUtf8(input)).toThrowError(new RegExp(`not UTF-8: byte ${offset} is ill-formed`));
          expect(() => decodeUtf8(input)).toThrowError(WritError);
        }
      }),
      { numRuns: 5000, seed: 27 },
    );
  });

  it("decodes well-formed text as it was", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(decodeUtf8(new TextEncoder().encode(text))).toBe(text.replace(/^\uFEFF/, ""));
      }),
      { numRuns: 2000, seed: 27 },
    );
  });
});
