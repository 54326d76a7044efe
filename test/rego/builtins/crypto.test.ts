import { describe, expect, it } from "vitest";
import { call, errorOf, evalRego } from "./helpers-net.ts";

describe("crypto hashes and HMACs", () => {
  it("digests the UTF-8 bytes in hex", () => {
    expect(call("crypto.md5", "")).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(call("crypto.sha1", "abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
    expect(call("crypto.sha256", "abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("keys HMACs with the second operand (RFC 4231 case 2)", () => {
    expect(call("crypto.hmac.sha256", "what do ya want for nothing?", "Jefe")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    expect(call("crypto.hmac.sha512", "what do ya want for nothing?", "Jefe")).toMatch(/^164b7a7bfcf819e2/);
    expect(call("crypto.hmac.md5", "what do ya want for nothing?", "Jefe")).toBe(
      "750c783e6ab0b503eaa86e310a5db738",
    );
    expect(call("crypto.hmac.sha1", "what do ya want for nothing?", "Jefe")).toBe(
      "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
    );
    expect(errorOf("crypto.hmac.sha1", "x", 1)).toBe(
      "eval_type_error: crypto.hmac.sha1: operand 2 must be string but got number",
    );
  });

  it("compares MACs, unequal lengths being unequal", () => {
    expect(call("crypto.hmac.equal", "abc", "abc")).toBe(true);
    expect(call("crypto.hmac.equal", "abc", "abd")).toBe(false);
    expect(call("crypto.hmac.equal", "abc", "abcd")).toBe(false);
    expect(call("crypto.hmac.equal", "é", "e")).toBe(false);
  });

  it("runs through the SDK", async () => {
    expect(
      await evalRego(`r := crypto.hmac.equal(crypto.md5("a"), "0cc175b9c0f1b6a831c399e269772661")`),
    ).toBe(true);
  });
});
