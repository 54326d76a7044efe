/**
 * Digests of JSON documents: SHA-256 (hex) of the RFC 8785 (JSON Canonicalization Scheme) text,
 * so that the same arguments always have the same digest whatever their key order or number
 * spelling. Used for `action.args_digest`, the grant's `args` claim and approvals.
 */
import crypto from "node:crypto";
import { createRequire } from "node:module";

// The package is CommonJS with an ESM-style type declaration; load it the CommonJS way.
const canonicalize: (value: unknown) => string | undefined = createRequire(import.meta.url)("canonicalize");

/** The RFC 8785 canonical JSON text of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("cannot canonicalize a value that is not JSON");
  return text;
}

/**
 * SHA-256 (hex) of a text's UTF-8 bytes: `crypto.hash`, the one-shot digest (Node 20.12 and
 * later; half the cost of a Hash object for the short texts hashed per call), or a Hash object.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex");

/** SHA-256 (hex) of the canonical JSON of `value`. */
export function jsonDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
