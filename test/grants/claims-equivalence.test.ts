/**
 * A grant's token is what the grant-claims schema makes of the request: header and payload
 * byte for byte (the signer builds the common claims without the schema; anything unusual goes
 * through it), and a request the schema refuses is refused with the schema's field errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldErrorsFromZod, WritError } from "../../src/core/errors.ts";
import { type Condition, GRANT_TYPE } from "../../src/core/types.ts";
import { grantClaimsSchema } from "../../src/executor/schemas.ts";
import { GrantSigner } from "../../src/grants/index.ts";

const NOW = Date.UTC(2030, 0, 1);
const digest = "0123456789abcdef".repeat(4);
const text = fc.oneof(fc.constantFrom("", "a", "none", "ü/x"), fc.string({ maxLength: 6 }));
const condition = fc.constantFrom<Condition>(
  { type: "max_uses", uses: 2 },
  { uses: 3, type: "max_uses" },
  { classifications: [], type: "redact_result", paths: ["/a"] },
  { type: "args_override", args: { z: 1, a: [true] } },
  { type: "max_value", path: "/amount", max: 10 },
  { type: "max_value", path: "no-slash", max: 10 },
);
const request = fc.record(
  {
    aud: text,
    sub: text,
    tnt: text,
    act: fc.oneof(
      fc.record({ name: text, version: text }),
      fc.constant({ version: "1", name: "repo.read", extra: 1 }),
    ),
    res: fc.oneof(
      fc.record({ type: text, id: text }),
      fc.record({ type: text, id: text, rev: fc.oneof(text, fc.constant(undefined)) }),
      fc.constant({ type: "none", id: "" }),
      fc.constant({ id: "ws-demo", type: "workspace", rev: "7" }),
    ),
    args: fc.constantFrom(digest, digest.toUpperCase(), "not-a-digest", ""),
    cnd: fc.oneof(fc.constant<Condition[]>([]), fc.array(condition, { maxLength: 2 })),
    dec: text,
    pol: text,
    max: fc.constantFrom(1, 2, 0, -1, 1.5, Number.NaN, 2 ** 60),
    extra: fc.constant("dropped"),
  },
  { requiredKeys: ["aud", "sub", "tnt", "act", "res", "args", "cnd", "dec", "pol", "max"] },
);

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("grant claims", () => {
  it("sign what the schema makes of the request, or refuse with its field errors", async () => {
    const signer = await GrantSigner.create({ issuer: "writ" }, { clock: () => NOW });
    const iat = Math.floor(NOW / 1000);
    await fc.assert(
      fc.asyncProperty(request, async (candidate) => {
        const outcome = await signer.issue(candidate).then(
          (issued) => ({ issued }),
          (error: unknown) => ({ error }),
        );
        const jti = "issued" in outcome ? outcome.issued.claims.jti : "00000000-0000-4000-8000-000000000000";
        const want = grantClaimsSchema.safeParse({
          ...candidate,
          iss: "writ",
          iat,
          nbf: iat,
          exp: iat + 60,
          jti,
        });
        if (!want.success) {
          expect("error" in outcome && outcome.error).toBeInstanceOf(WritError);
          if ("error" in outcome && outcome.error instanceof WritError) {
            expect(outcome.error.category).toBe("internal");
            expect(outcome.error.fieldErrors).toEqual(fieldErrorsFromZod(want.error));
          }
          return;
        }
        if ("error" in outcome) throw outcome.error;
        const [header, payload] = outcome.issued.token.split(".");
        expect(header).toBe(encode({ alg: "EdDSA", kid: signer.currentKid, typ: GRANT_TYPE }));
        expect(payload).toBe(encode(want.data));
        expect(outcome.issued.claims).toStrictEqual(want.data);
      }),
      { numRuns: 400 },
    );
  });
});
