import { createHmac, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import { fromJSON, toJSON, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const NOW = 1_700_000_000n * 1_000_000_000n;
const ctx = () => systemContext(() => NOW);
const v = (x: unknown): Value => fromJSON(x);
const call = (name: string, ...args: unknown[]) => {
  const r = callBuiltin(name, args.map(v), ctx());
  return r === undefined ? undefined : toJSON(r);
};
const error = (name: string, ...args: unknown[]): string => {
  try {
    builtinTable.get(name)?.impl(args.map(v), ctx());
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  return "no error";
};

const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64url");
function token(header: object, payload: object | string, signer: (input: string) => Buffer): string {
  const input = `${b64(JSON.stringify(header))}.${b64(typeof payload === "string" ? payload : JSON.stringify(payload))}`;
  return `${input}.${b64(signer(input))}`;
}
const hs256 = (secret: string) => (input: string) => createHmac("sha256", secret).update(input).digest();

const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
const ed = generateKeyPairSync("ed25519");
const pem = (k: KeyObject) => k.export({ format: "pem", type: "spki" }).toString();
const es256 = (input: string) =>
  sign("sha256", Buffer.from(input), { key: ec.privateKey, dsaEncoding: "ieee-p1363" });

describe("io.jwt.decode", () => {
  it("decodes header, payload and the signature as hex", () => {
    const jwt =
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIwIiwiaXNzIjoib3BhIn0.XmVoLoHI3pxMtMO_WRONMSJzGUDP9pDjy8Jp0_tdRXY";
    expect(call("io.jwt.decode", jwt)).toEqual([
      { alg: "HS256", typ: "JWT" },
      { iss: "opa", sub: "0" },
      "5e65682e81c8de9c4cb4c3bf59138d3122731940cff690e3cbc269d3fb5d4576",
    ]);
  });

  it("reports OPA's errors", () => {
    expect(error("io.jwt.decode", "abc")).toBe("io.jwt.decode: encoded JWT had no period separators");
    expect(error("io.jwt.decode", "a.b")).toBe("io.jwt.decode: encoded JWT must have 3 sections, found 2");
    expect(error("io.jwt.decode", "eyJhbGciOiJIUzI1NiJ!.e30.")).toContain(
      "JWT header had invalid encoding: illegal base64 data at input byte 19",
    );
    expect(error("io.jwt.decode", "eyJhbGciOiJIUzI1NiJ9!.e30.")).toContain(
      "JWT header had invalid encoding: illegal base64url string: eyJhbGciOiJIUzI1NiJ9!",
    );
    expect(error("io.jwt.decode", `${b64('{"alg":"x","enc":"y"}')}.e30.`)).toBe(
      "io.jwt.decode: JWT is a JWE object, which is not supported",
    );
  });
});

describe("io.jwt.verify_*", () => {
  it("verifies HMAC signatures", () => {
    const jwt = token({ alg: "HS256" }, { a: 1 }, hs256("secret"));
    expect(call("io.jwt.verify_hs256", jwt, "secret")).toBe(true);
    expect(call("io.jwt.verify_hs256", jwt, "wrong")).toBe(false);
  });

  it("verifies ES256 and EdDSA with PEM keys and JWKs", () => {
    const jwt = token({ alg: "ES256" }, { a: 1 }, es256);
    expect(call("io.jwt.verify_es256", jwt, pem(ec.publicKey))).toBe(true);
    const jwk = JSON.stringify({ keys: [{ ...ec.publicKey.export({ format: "jwk" }), alg: "ES256" }] });
    expect(call("io.jwt.verify_es256", jwt, jwk)).toBe(true);
    expect(
      call("io.jwt.verify_es256", jwt, pem(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey)),
    ).toBe(false);
    // An RSA verifier rejects an EC key rather than erroring.
    expect(call("io.jwt.verify_rs256", jwt, pem(ec.publicKey))).toBe(false);

    const edJwt = token({ alg: "EdDSA" }, { a: 1 }, (input) => sign(null, Buffer.from(input), ed.privateKey));
    expect(call("io.jwt.verify_eddsa", edJwt, pem(ed.publicKey))).toBe(true);
  });

  it("rejects malformed keys with OPA's messages", () => {
    const jwt = token({ alg: "ES256" }, { a: 1 }, es256);
    expect(error("io.jwt.verify_es256", jwt, `${pem(ec.publicKey)}\nxx`)).toContain(
      "extra data after a PEM certificate block",
    );
    expect(error("io.jwt.verify_es256", jwt, "-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n")).toContain(
      "failed to extract a Key from the PEM certificate",
    );
    expect(error("io.jwt.verify_es256", jwt, "nope")).toContain("failed to parse a JWK key (set)");
  });
});

describe("io.jwt.decode_verify", () => {
  const secret = { secret: "secret" };

  it("checks signature, exp, nbf, iss and aud against ctx.now()", () => {
    const now = Number(NOW / 1_000_000_000n);
    const ok = token(
      { alg: "HS256" },
      { iss: "me", aud: ["x", "y"], exp: now + 10, nbf: now },
      hs256("secret"),
    );
    expect(call("io.jwt.decode_verify", ok, { ...secret, iss: "me", aud: "y" })).toEqual([
      true,
      { alg: "HS256" },
      { iss: "me", aud: ["x", "y"], exp: now + 10, nbf: now },
    ]);
    expect(call("io.jwt.decode_verify", ok, { ...secret, iss: "other" })).toEqual([false, {}, {}]);
    expect(call("io.jwt.decode_verify", ok, secret)).toEqual([false, {}, {}]); // aud present, none required
    expect(call("io.jwt.decode_verify", ok, { ...secret, aud: "y", time: (now + 10) * 1e9 })).toEqual([
      false,
      {},
      {},
    ]);
    const expired = token({ alg: "HS256" }, { exp: now }, hs256("secret"));
    expect(call("io.jwt.decode_verify", expired, secret)).toEqual([false, {}, {}]);
    expect(call("io.jwt.decode_verify", ok, { secret: "wrong", aud: "y" })).toEqual([false, {}, {}]);
  });

  it("verifies with a certificate constraint and checks the algorithm", () => {
    const jwt = token({ alg: "ES256", typ: "JWT" }, { sub: "a" }, es256);
    expect(call("io.jwt.decode_verify", jwt, { cert: pem(ec.publicKey) })).toEqual([
      true,
      { alg: "ES256", typ: "JWT" },
      { sub: "a" },
    ]);
    expect(call("io.jwt.decode_verify", jwt, { cert: pem(ec.publicKey), alg: "RS256" })).toEqual([
      false,
      {},
      {},
    ]);
  });

  it("rejects bad constraints", () => {
    const jwt = token({ alg: "HS256" }, {}, hs256("s"));
    expect(error("io.jwt.decode_verify", jwt, {})).toContain("no key constraint");
    expect(error("io.jwt.decode_verify", jwt, { secret: "s", cert: pem(ec.publicKey) })).toContain(
      "duplicate key constraints",
    );
    expect(error("io.jwt.decode_verify", jwt, { secret: "s", foo: 1 })).toContain(
      "unknown token validation constraint: foo",
    );
    const badExp = token({ alg: "HS256" }, { exp: "soon" }, hs256("s"));
    expect(error("io.jwt.decode_verify", badExp, { secret: "s" })).toContain("exp value must be a number");
  });
});

describe("io.jwt.encode_sign", () => {
  const key = {
    kty: "oct",
    k: "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
  };

  it("signs RFC 7515 A.1 exactly", () => {
    expect(
      call(
        "io.jwt.encode_sign_raw",
        '{"typ":"JWT",\r\n "alg":"HS256"}',
        '{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}',
        JSON.stringify(key),
      ),
    ).toBe(
      "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    );
  });

  it("round-trips through decode_verify for every family", () => {
    const ecJwk = ec.privateKey.export({ format: "jwk" });
    const jwt = call("io.jwt.encode_sign", { alg: "ES256" }, { sub: "x" }, ecJwk);
    expect(typeof jwt).toBe("string");
    expect(call("io.jwt.decode_verify", jwt, { cert: pem(ec.publicKey) })).toEqual([
      true,
      { alg: "ES256" },
      { sub: "x" },
    ]);
    const edJwt = call(
      "io.jwt.encode_sign",
      { alg: "EdDSA" },
      { sub: "x" },
      ed.privateKey.export({ format: "jwk" }),
    );
    expect(call("io.jwt.verify_eddsa", edJwt, pem(ed.publicKey))).toBe(true);
  });

  it("reports header errors", () => {
    const jwk = JSON.stringify(key);
    expect(error("io.jwt.encode_sign_raw", '{"alg":"dummy"}', "{}", jwk)).toContain(
      "unknown JWS algorithm: dummy",
    );
    expect(error("io.jwt.encode_sign_raw", "", "{}", jwk)).toContain(
      "missing or invalid 'alg' header: cannot parse JSON: cannot parse empty string",
    );
    expect(error("io.jwt.encode_sign_raw", '{"alg":"HS256"}', "nope", jwk)).toContain(
      "type is JWT but payload is not JSON",
    );
  });
});

describe("end to end", () => {
  it("verifies a token inside a compiled policy", async () => {
    const jwt = token({ alg: "HS256", typ: "JWT" }, { sub: "alice" }, hs256("k"));
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
r := [valid, payload.sub] if {
  [valid, _, payload] := io.jwt.decode_verify(input.token, {"secret": "k"})
}
bad := io.jwt.verify_hs256(input.token, "other")`,
        },
      ],
      { entrypoints: ["p/r", "p/bad"] },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({ token: jwt }, "p/r")).toEqual([{ result: [true, "alice"] }]);
    expect(policy.evaluate({ token: jwt }, "p/bad")).toEqual([{ result: false }]);
  });
});
