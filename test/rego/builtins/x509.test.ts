import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { builtinTable, callBuiltin, systemContext } from "../../../src/rego/builtins/index.ts";
import { fromJSON, toJSON, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";
import { CSR, ED_KEY, LEAF, LEAF_KEY, OTHER, ROOT, RSA_KEY } from "./x509.fixtures.ts";

const ctx = () => systemContext(() => 1_900_000_000n * 1_000_000_000n);
const call = (name: string, ...args: unknown[]): unknown => {
  const r = callBuiltin(
    name,
    args.map((a) => fromJSON(a)),
    ctx(),
  );
  return r === undefined ? undefined : toJSON(r);
};
const error = (name: string, ...args: unknown[]): string => {
  try {
    builtinTable.get(name)?.impl(
      args.map((a): Value => fromJSON(a)),
      ctx(),
    );
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  return "no error";
};
const record = (x: unknown): Record<string, unknown> => {
  if (typeof x !== "object" || x === null || Array.isArray(x)) throw new Error("not an object");
  return Object.fromEntries(Object.entries(x));
};
const list = (x: unknown): unknown[] => {
  if (!Array.isArray(x)) throw new Error("not an array");
  return x;
};

describe("crypto.x509.parse_certificates", () => {
  it("shapes certificates like Go's x509.Certificate JSON", () => {
    const [leaf] = list(call("crypto.x509.parse_certificates", LEAF)).map(record);
    expect(leaf).toMatchObject({
      DNSNames: ["leaf.example.com"],
      IPAddresses: ["10.0.0.1"],
      URIStrings: ["spiffe://example.org/svc"],
      ExtKeyUsage: [1],
      KeyUsage: 1,
      IsCA: false,
      Version: 3,
      PublicKeyAlgorithm: 3,
      SignatureAlgorithm: 10,
      Subject: { CommonName: "leaf.example.com", Names: [{ Type: [2, 5, 4, 3], Value: "leaf.example.com" }] },
      Issuer: { CommonName: "Root CA", Organization: ["Writ"] },
    });
    expect(String(leaf?.NotBefore)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("accepts base64 of PEM and rejects other PEM blocks", () => {
    const both = list(call("crypto.x509.parse_certificates", Buffer.from(ROOT + LEAF).toString("base64")));
    expect(both).toHaveLength(2);
    expect(error("crypto.x509.parse_certificates", LEAF_KEY)).toContain(
      "PEM block type is 'PRIVATE KEY', expected CERTIFICATE",
    );
  });
});

describe("crypto.x509.parse_and_verify_certificates", () => {
  it("verifies a chain given root first, leaf last", () => {
    const [ok, chain] = list(call("crypto.x509.parse_and_verify_certificates", ROOT + LEAF));
    expect(ok).toBe(true);
    expect(list(chain).map((c) => record(record(c).Subject).CommonName)).toEqual([
      "leaf.example.com",
      "Root CA",
    ]);
    expect(call("crypto.x509.parse_and_verify_certificates", OTHER + LEAF)).toEqual([false, []]);
    expect(call("crypto.x509.parse_and_verify_certificates", LEAF)).toEqual([false, []]);
  });

  it("honours DNSName and KeyUsages options", () => {
    const verify = (opts: object) =>
      list(call("crypto.x509.parse_and_verify_certificates_with_options", ROOT + LEAF, opts))[0];
    expect(verify({ DNSName: "leaf.example.com", KeyUsages: ["KeyUsageServerAuth"] })).toBe(true);
    expect(verify({ DNSName: "other.example.com" })).toBe(false);
    expect(verify({ KeyUsages: ["KeyUsageClientAuth"] })).toBe(false);
    expect(verify({ CurrentTime: 0 })).toBe(false);
    expect(
      error("crypto.x509.parse_and_verify_certificates_with_options", ROOT + LEAF, { Foo: 1 }),
    ).toContain("invalid key option");
    expect(
      error("crypto.x509.parse_and_verify_certificates_with_options", ROOT + LEAF, { KeyUsages: ["Nope"] }),
    ).toContain("invalid entries for 'KeyUsages' found: [Nope]");
  });
});

describe("keys and requests", () => {
  it("parses a CSR", () => {
    expect(call("crypto.x509.parse_certificate_request", CSR)).toMatchObject({
      Subject: { CommonName: "leaf.example.com" },
      DNSNames: ["leaf.example.com"],
      PublicKeyAlgorithm: 3,
    });
    expect(error("crypto.x509.parse_certificate_request", Buffer.from(LEAF).toString("base64"))).toContain(
      "invalid PEM-encoded certificate signing request",
    );
  });

  it("parses private keys", () => {
    const keys = list(call("crypto.parse_private_keys", RSA_KEY + LEAF_KEY + ED_KEY)).map((k) =>
      typeof k === "string" ? k : Object.keys(record(k)).sort(),
    );
    expect(keys[0]).toEqual(["D", "E", "N", "Precomputed", "Primes"]);
    expect(keys[1]).toEqual(["Curve", "D", "X", "Y"]);
    expect(typeof keys[2]).toBe("string");
    expect(call("crypto.parse_private_keys", "")).toBeNull();
    expect(record(call("crypto.x509.parse_rsa_private_key", RSA_KEY))).toMatchObject({
      kty: "RSA",
      e: "AQAB",
    });
  });

  it("parses a key pair and checks they match", () => {
    const pair = record(call("crypto.x509.parse_keypair", LEAF, LEAF_KEY));
    expect(list(pair.Certificate)).toHaveLength(1);
    expect(record(pair.Leaf).DNSNames).toEqual(["leaf.example.com"]);
    expect(error("crypto.x509.parse_keypair", LEAF, RSA_KEY)).toContain(
      "private key does not match public key",
    );
  });
});

describe("end to end", () => {
  it("reads certificate fields inside a compiled policy", async () => {
    const built = buildPolicy(
      [
        {
          file: "p.rego",
          source: `package p
names := [c.Subject.CommonName | some c in crypto.x509.parse_certificates(input.pem)]`,
        },
      ],
      { entrypoints: ["p/names"] },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({ pem: ROOT + LEAF }, "p/names")).toEqual([
      { result: ["Root CA", "leaf.example.com"] },
    ]);
  });
});
