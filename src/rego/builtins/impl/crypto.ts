/**
 * The hash and HMAC builtins (`v1/topdown/crypto.go`): hex digests of the UTF-8 bytes of a
 * string, HMACs keyed by the UTF-8 bytes of the key, and a constant-time comparison.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { makeBoolean } from "../../plan/value.ts";
import { define, str, stringArg } from "../registry.ts";

for (const alg of ["md5", "sha1", "sha256"] as const) {
  define(`crypto.${alg}`, (args) => str(createHash(alg).update(stringArg(args, 0), "utf8").digest("hex")));
}

for (const alg of ["md5", "sha1", "sha256", "sha512"] as const) {
  define(`crypto.hmac.${alg}`, (args) => {
    const message = stringArg(args, 0);
    const key = stringArg(args, 1);
    return str(createHmac(alg, Buffer.from(key, "utf8")).update(message, "utf8").digest("hex"));
  });
}

/** Go's `hmac.Equal`: constant time for inputs of equal length; unequal lengths are unequal. */
define("crypto.hmac.equal", (args) => {
  const a = Buffer.from(stringArg(args, 0), "utf8");
  const b = Buffer.from(stringArg(args, 1), "utf8");
  return makeBoolean(a.length === b.length && timingSafeEqual(a, b));
});
