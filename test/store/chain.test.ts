/**
 * The chain's one canonical serialization per entry: the stored text is the canonical JSON of
 * the body, and the hash made from its members (with `prev_hash` and `seq` merged in) is the
 * hash of the whole entry's canonical JSON, for any input and result.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/digest.ts";
import { hashEntry } from "../../src/decisionlog/index.ts";
import { chainAfter, prepareEntries } from "../../src/store/chain.ts";
import { newEntry } from "./fixtures.ts";

describe("the decision log chain", () => {
  it("hashes and stores one canonical serialization, the same as hashing the whole entry", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.option(fc.jsonValue(), { nil: undefined }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        fc.array(fc.string({ minLength: 1 }), { maxLength: 3 }),
        (input, result, seq, codes) => {
          const entry = newEntry({
            input,
            result,
            reasons: codes.map((code) => ({ code, message: code, visible_to_model: true })),
          });
          const [prepared] = prepareEntries([entry]);
          if (prepared === undefined) throw new Error("nothing prepared");
          expect(prepared.text).toBe(canonicalJson(JSON.parse(prepared.text)));
          const [chained] = chainAfter({ seq, hash: "a".repeat(64) }, [prepared]);
          if (chained === undefined) throw new Error("nothing chained");
          expect(chained).toMatchObject({ seq: seq + 1, prev_hash: "a".repeat(64) });
          expect(chained.hash).toBe(hashEntry(chained));
        },
      ),
      { numRuns: 300 },
    );
  });
});
