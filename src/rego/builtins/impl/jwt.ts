/**
 * JSON Web Tokens (`io.jwt.*`), after OPA's `topdown/tokens.go`: decoding, signature
 * verification with PEM certificates, PEM public keys or JWK (sets), full validation
 * (`decode_verify`) and signing. Everything runs synchronously on `node:crypto`.
 */
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  constants as cryptoConstants,
  sign as cryptoSign,
  verify as cryptoVerify,
  type JsonWebKey,
  type KeyObject,
  timingSafeEqual,
  X509Certificate,
} from "node:crypto";
import {
  compareNumbers,
  FALSE,
  JSONSyntaxError,
  makeArray,
  makeBoolean,
  makeObject,
  makeString,
  numberFromFloat,
  type ObjectValue,
  parseJSON,
  TRUE,
  toJSONText,
  type Value,
} from "../../plan/value.ts";
import { arg, BuiltinError, define, fail, objectArg, stringArg, typeError } from "../registry.ts";
import { base64UrlDecodeBytes, pemDecode } from "./pem.ts";

// ------------------------------------------------------------------------------------ tokens

interface Token {
  readonly header: string;
  readonly payload: string;
  readonly signature: string;
}

/** Splits a compact JWS (operand 1) into its three parts. */
function splitToken(v: Value): Token {
  if (v.type !== "string") return typeError(1, v, "string");
  const s = v.value;
  if (!s.includes(".")) fail("encoded JWT had no period separators");
  const parts = s.split(".");
  if (parts.length !== 3) fail(`encoded JWT must have 3 sections, found ${parts.length}`);
  const [header = "", payload = "", signature = ""] = parts;
  return { header, payload, signature };
}

/** OPA's `base64url.decode`, with its error message (`prefix: …` when given). */
function b64url(s: string, prefix?: string): Buffer {
  try {
    return base64UrlDecodeBytes(s);
  } catch (e) {
    if (e instanceof Error) fail(prefix ? `${prefix}: ${e.message}` : e.message);
    throw e;
  }
}

/** Go's `string(bytes)` as OPA reads it back as JSON text. */
function text(bytes: Buffer): string {
  return bytes.toString("utf8");
}

/** OPA's `extractJSONObject`. */
function jsonObject(s: string): ObjectValue {
  let v: Value;
  try {
    v = parseJSON(s);
  } catch (e) {
    if (e instanceof JSONSyntaxError) fail(`invalid JSON: ${e.message}`);
    throw e;
  }
  if (v.type !== "object") fail("decoded JSON type was not an Object");
  return v;
}

/** The token's header as an object (`decodeHeader` + `validateJWTHeader`). */
function decodeHeader(token: Token): ObjectValue {
  const raw = text(b64url(token.header, "JWT header had invalid encoding"));
  let header: ObjectValue;
  try {
    header = jsonObject(raw);
  } catch (e) {
    if (e instanceof BuiltinError) fail(`bad JWT header: ${e.message}`);
    throw e;
  }
  if (header.get(makeString("enc")) !== undefined) fail("JWT is a JWE object, which is not supported");
  return header;
}

function decodeSignature(token: Token): Buffer {
  return b64url(token.signature);
}

interface TokenHeader {
  alg: string;
  kid: string;
  typ: string;
  cty: string;
  crit: Set<string> | undefined;
  unknown: string[];
}

/** OPA's `parseTokenHeader`: the registered parameters, type-checked. */
function parseTokenHeader(header: ObjectValue): TokenHeader {
  const h: TokenHeader = { alg: "", kid: "", typ: "", cty: "", crit: undefined, unknown: [] };
  for (const [k, v] of header.entries()) {
    const name = k.type === "string" ? k.value : "";
    switch (name) {
      case "alg":
      case "kid":
      case "typ":
      case "cty":
        if (v.type !== "string") fail(`${name}: must be a string`);
        h[name] = v.value;
        break;
      case "crit": {
        if (v.type !== "array") fail("crit: must be a list");
        // OPA stops at the first non-string element without reporting it.
        const crit = new Set<string>();
        for (const item of v.items) {
          if (item.type !== "string") break;
          crit.add(item.value);
        }
        if (crit.size === 0) fail("crit: must be a nonempty list");
        h.crit = crit;
        break;
      }
      default:
        h.unknown.push(name);
    }
  }
  return h;
}

/** RFC 7515: `alg` present, and no critical parameter we do not understand. */
function validHeader(h: TokenHeader): boolean {
  if (h.alg === "") return false;
  return !h.unknown.some((u) => h.crit?.has(u));
}

// ------------------------------------------------------------------------------------ io.jwt.decode

function decode(tokenValue: Value): Value {
  const token = splitToken(tokenValue);
  const header = decodeHeader(token);
  let payloadText = text(b64url(token.payload, "JWT payload had invalid encoding"));
  const cty = header.get(makeString("cty"));
  if (cty?.type === "string" && cty.value === "JWT") {
    // A nested token: the payload is itself a JWT, possibly quoted.
    payloadText = payloadText.replace(/^["']+|["']+$/g, "");
    return decode(makeString(payloadText));
  }
  const payload = jsonObject(payloadText);
  const signature = b64url(token.signature, "JWT signature had invalid encoding");
  return makeArray([header, payload, makeString(signature.toString("hex"))]);
}

define("io.jwt.decode", (args) => decode(arg(args, 0)));

// ------------------------------------------------------------------------------------ keys

/** The JWS algorithms OPA knows. */
const ALGORITHMS = new Set([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "HS256",
  "HS384",
  "HS512",
  "EdDSA",
]);

/** A key to verify with: an asymmetric key, or the bytes of a symmetric (`oct`) JWK. */
type Key = KeyObject | Buffer;

interface VerificationKey {
  readonly key: Key;
  readonly alg: string;
  readonly kid: string;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function jwkString(jwk: Record<string, unknown>, field: string): string | undefined {
  const v = jwk[field];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new Error(`invalid ${field}: expected string`);
  return v;
}

function toNodeJwk(jwk: Record<string, unknown>): JsonWebKey {
  const out: JsonWebKey = {};
  for (const [k, v] of Object.entries(jwk)) {
    if (typeof v === "string") out[k] = v;
  }
  return out;
}

/** One JWK as the key it holds (private keys stay private, as jwx exports them). */
function importJwk(jwk: Record<string, unknown>): Key {
  const kty = jwkString(jwk, "kty");
  if (kty === undefined) throw new Error(`required field kty is missing`);
  switch (kty) {
    case "oct": {
      const k = jwkString(jwk, "k");
      if (k === undefined) throw new Error("required field k is missing");
      return base64UrlDecodeBytes(k);
    }
    case "RSA":
    case "EC":
    case "OKP": {
      const key = toNodeJwk(jwk);
      return jwk.d !== undefined
        ? createPrivateKey({ key, format: "jwk" })
        : createPublicKey({ key, format: "jwk" });
    }
    default:
      throw new Error(`invalid key type from JSON (${kty})`);
  }
}

/** A JWK or a JWK Set (`{"keys": […]}`), in order. Throws plain errors. */
function parseJwks(src: string): Array<{ jwk: Record<string, unknown>; key: Key }> {
  const parsed: unknown = JSON.parse(src);
  if (!isRecord(parsed)) throw new Error("invalid JWK: expected a JSON object");
  const list: unknown[] = Array.isArray(parsed.keys) ? parsed.keys : [parsed];
  return list.map((jwk) => {
    if (!isRecord(jwk)) throw new Error("invalid JWK: expected a JSON object");
    return { jwk, key: importJwk(jwk) };
  });
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * OPA's `getKeysFromCertOrJWK`: a PEM certificate or public key (nothing after it), else a JWK
 * or JWK Set whose keys of unknown algorithms are skipped.
 */
function keysFromCertOrJWK(source: string): VerificationKey[] {
  const cached = keyCache.get(source);
  if (cached) {
    keyCache.delete(source);
    keyCache.set(source, cached);
    return cached;
  }
  const keys = parseKeys(source);
  keyCache.set(source, keys);
  if (keyCache.size > KEY_CACHE_SIZE) {
    const oldest = keyCache.keys().next().value;
    if (oldest !== undefined) keyCache.delete(oldest);
  }
  return keys;
}

/**
 * Parsed keys by their source text (a PEM block or a JWKS, usually the same one for every
 * evaluation): importing a key costs far more than a signature check. Key objects are
 * immutable, so sharing them is safe; least recently used sources leave first.
 */
const KEY_CACHE_SIZE = 256;
const keyCache = new Map<string, VerificationKey[]>();

function parseKeys(source: string): VerificationKey[] {
  const pem = pemDecode(Buffer.from(source, "utf8"));
  if (pem) {
    if (pem.rest.length > 0) fail("extra data after a PEM certificate block");
    if (pem.block.type === "CERTIFICATE") {
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(pem.block.bytes);
      } catch (e) {
        return fail(`failed to parse a PEM certificate: ${errorText(e)}`);
      }
      return [{ key: cert.publicKey, alg: "", kid: "" }];
    }
    if (pem.block.type === "PUBLIC KEY") {
      try {
        return [
          { key: createPublicKey({ key: pem.block.bytes, format: "der", type: "spki" }), alg: "", kid: "" },
        ];
      } catch (e) {
        return fail(`failed to parse a PEM public key: ${errorText(e)}`);
      }
    }
    fail("failed to extract a Key from the PEM certificate");
  }
  let jwks: Array<{ jwk: Record<string, unknown>; key: Key }>;
  try {
    jwks = parseJwks(source);
  } catch (e) {
    return fail(`failed to parse a JWK key (set): ${errorText(e)}`);
  }
  const keys: VerificationKey[] = [];
  for (const { jwk, key } of jwks) {
    const alg = typeof jwk.alg === "string" ? jwk.alg : "";
    if (alg !== "" && !ALGORITHMS.has(alg)) continue;
    keys.push({ key, alg, kid: typeof jwk.kid === "string" ? jwk.kid : "" });
  }
  return keys;
}

// ------------------------------------------------------------------------------------ signatures

const HASHES: Record<string, string> = { "256": "sha256", "384": "sha384", "512": "sha512" };

function hashOf(alg: string): string {
  return HASHES[alg.slice(2)] ?? "sha256";
}

function isPublic(key: Key, type: string): key is KeyObject {
  return !Buffer.isBuffer(key) && key.type === "public" && key.asymmetricKeyType === type;
}

/** The public half of an asymmetric key of the given type (jwx verifies with either half). */
function publicOf(key: Key, type: string): KeyObject | undefined {
  if (Buffer.isBuffer(key) || key.asymmetricKeyType !== type) return undefined;
  return key.type === "private" ? createPublicKey(key) : key;
}

/** Minimal DER INTEGER for a big-endian unsigned magnitude. */
function derInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let body = bytes.subarray(i);
  if (body.length === 0) body = Buffer.from([0]);
  if ((body[0] ?? 0) & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return Buffer.concat([Buffer.from([0x02]), derLength(body.length), body]);
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let m = n; m > 0; m >>= 8) bytes.unshift(m & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** Go's `ecdsa.Verify` on r‖s split at half the signature's length. */
function verifyEcdsaHalves(key: KeyObject, hash: string, data: Buffer, sig: Buffer): boolean {
  const n = Math.floor(sig.length / 2);
  const r = sig.subarray(0, n);
  const s = sig.subarray(n);
  const zero = (b: Buffer) => b.every((x) => x === 0);
  if (zero(r) || zero(s)) return false;
  const seq = Buffer.concat([derInteger(r), derInteger(s)]);
  const der = Buffer.concat([Buffer.from([0x30]), derLength(seq.length), seq]);
  return safeVerify(() => cryptoVerify(hash, data, key, der));
}

function safeVerify(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

function rsaOptions(key: KeyObject, pss: boolean) {
  return pss
    ? {
        key,
        padding: cryptoConstants.RSA_PKCS1_PSS_PADDING,
        saltLength: cryptoConstants.RSA_PSS_SALTLEN_AUTO,
      }
    : { key, padding: cryptoConstants.RSA_PKCS1_PADDING };
}

type Verifier = (key: Key, data: Buffer, signature: Buffer) => boolean;

/** The verifiers of `io.jwt.verify_<alg>`: the key must be a public key of the family. */
function builtinVerifier(alg: string): Verifier {
  const hash = hashOf(alg);
  if (alg.startsWith("RS") || alg.startsWith("PS")) {
    const pss = alg.startsWith("PS");
    return (key, data, sig) =>
      isPublic(key, "rsa") && safeVerify(() => cryptoVerify(hash, data, rsaOptions(key, pss), sig));
  }
  if (alg.startsWith("ES"))
    return (key, data, sig) => isPublic(key, "ec") && verifyEcdsaHalves(key, hash, data, sig);
  return (key, data, sig) => isPublic(key, "ed25519") && safeVerify(() => cryptoVerify(null, data, key, sig));
}

/** `jwsbb.Verify`: the algorithm from the token header against any kind of key. */
function verifyWithAlg(key: Key, alg: string, data: Buffer, sig: Buffer): boolean {
  if (!ALGORITHMS.has(alg)) return false;
  const hash = hashOf(alg);
  if (alg.startsWith("HS")) {
    if (!Buffer.isBuffer(key)) return false;
    return hmacEqual(sig, createHmac(hash, key).update(data).digest());
  }
  if (alg.startsWith("RS") || alg.startsWith("PS")) {
    const pub = publicOf(key, "rsa");
    return (
      pub !== undefined && safeVerify(() => cryptoVerify(hash, data, rsaOptions(pub, alg[0] === "P"), sig))
    );
  }
  if (alg.startsWith("ES")) {
    const pub = publicOf(key, "ec");
    return (
      pub !== undefined &&
      safeVerify(() => cryptoVerify(hash, data, { key: pub, dsaEncoding: "ieee-p1363" }, sig))
    );
  }
  const pub = publicOf(key, "ed25519");
  return pub !== undefined && safeVerify(() => cryptoVerify(null, data, pub, sig));
}

function hmacEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** OPA's `builtinJWTVerify` (RS*, PS*, ES*, EdDSA). */
function verifyBuiltin(alg: string) {
  const verifier = builtinVerifier(alg);
  return (args: readonly Value[]): Value => {
    const token = splitToken(arg(args, 0));
    const keys = keysFromCertOrJWK(stringArg(args, 1));
    const signature = decodeSignature(token);
    const header = parseTokenHeader(decodeHeader(token));
    const data = Buffer.from(`${token.header}.${token.payload}`, "utf8");
    if (header.kid !== "") {
      const byKid = keys.find((k) => k.kid === header.kid);
      if (byKid) return makeBoolean(verifier(byKid.key, data, signature));
    }
    for (const key of keys) {
      if (key.alg !== "" && key.alg !== header.alg) continue;
      if (verifier(key.key, data, signature)) return TRUE;
    }
    return FALSE;
  };
}

for (const alg of ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"]) {
  define(`io.jwt.verify_${alg.toLowerCase()}`, verifyBuiltin(alg));
}
define("io.jwt.verify_eddsa", verifyBuiltin("EdDSA"));

for (const bits of ["256", "384", "512"]) {
  define(`io.jwt.verify_hs${bits}`, (args) => {
    const jwt = stringArg(args, 0);
    const secret = stringArg(args, 1);
    const token = splitToken(makeString(jwt));
    const mac = createHmac(`sha${bits}`, Buffer.from(secret, "utf8"))
      .update(`${token.header}.${token.payload}`, "utf8")
      .digest();
    return makeBoolean(hmacEqual(decodeSignature(token), mac));
  });
}

// ------------------------------------------------------------------------------------ io.jwt.decode_verify

interface Constraints {
  secret: string;
  alg: string;
  iss: string;
  aud: string;
  keys: VerificationKey[] | undefined;
  time: number;
}

/** OPA's `timeFromValue`: a non-negative number of nanoseconds, as a double. */
function timeFromValue(v: Value): number {
  if (v.type !== "number") fail("token time constraint: must be a number");
  const t = v.float;
  if (!Number.isFinite(t)) fail("token time constraint: unvalid float64");
  if (t < 0) fail("token time constraint: must not be negative");
  return t;
}

function stringConstraint(name: string, v: Value): string {
  if (v.type !== "string") fail(`${name} constraint: must be a string`);
  return v.value;
}

function parseConstraints(o: ObjectValue, now: bigint): Constraints {
  const c: Constraints = { secret: "", alg: "", iss: "", aud: "", keys: undefined, time: -1 };
  for (const [k, v] of o.entries()) {
    const name = k.type === "string" ? k.value : "";
    switch (name) {
      case "cert":
        if (v.type !== "string") fail("cert constraint: must be a string");
        c.keys = keysFromCertOrJWK(v.value);
        break;
      case "secret":
      case "alg":
      case "iss":
      case "aud":
        c[name] = stringConstraint(name, v);
        break;
      case "time":
        c.time = timeFromValue(v);
        break;
      default:
        fail(`unknown token validation constraint: ${name}`);
    }
  }
  if (c.time === -1) c.time = Number(now);
  const keys = (c.keys !== undefined ? 1 : 0) + (c.secret !== "" ? 1 : 0);
  if (keys > 1) fail("duplicate key constraints");
  if (keys < 1) fail("no key constraint");
  return c;
}

function verifyConstraints(c: Constraints, kid: string, alg: string, data: Buffer, sig: Buffer): boolean {
  if (c.keys !== undefined) {
    if (kid !== "") {
      const byKid = c.keys.find((k) => k.kid === kid);
      if (byKid) return verifyWithAlg(byKid.key, alg, data, sig);
    }
    return c.keys.some((k) => (k.alg === "" || k.alg === alg) && verifyWithAlg(k.key, alg, data, sig));
  }
  return verifyWithAlg(Buffer.from(c.secret, "utf8"), alg, data, sig);
}

function validAudience(c: Constraints, aud: Value): boolean {
  if (aud.type === "string") return aud.value === c.aud;
  if (aud.type !== "array") return false;
  return aud.items.some((x) => x.type === "string" && x.value === c.aud);
}

const UNVERIFIED = (): Value => makeArray([FALSE, makeObject(), makeObject()]);

function decodeVerify(args: readonly Value[], now: bigint): Value {
  let a = arg(args, 0);
  const c = parseConstraints(objectArg(args, 1), now);
  let token: Token;
  let header: ObjectValue;
  let payloadText: string;
  for (;;) {
    token = splitToken(a);
    header = decodeHeader(token);
    const h = parseTokenHeader(header);
    if (!validHeader(h)) return UNVERIFIED();
    if (c.alg !== "" && c.alg !== h.alg) return UNVERIFIED();
    const signature = decodeSignature(token);
    const data = Buffer.from(`${token.header}.${token.payload}`, "utf8");
    if (!verifyConstraints(c, h.kid, h.alg, data, signature)) return UNVERIFIED();
    payloadText = text(b64url(token.payload, "JWT payload had invalid encoding"));
    if (h.cty.toUpperCase() === "JWT") {
      a = makeString(payloadText);
      continue;
    }
    break;
  }
  const payload = jsonObject(payloadText);

  if (c.iss !== "") {
    const iss = payload.get(makeString("iss"));
    if (iss?.type !== "string" || iss.value !== c.iss) return UNVERIFIED();
  }
  const aud = payload.get(makeString("aud"));
  if (aud !== undefined) {
    if (!validAudience(c, aud)) return UNVERIFIED();
  } else if (c.aud !== "") return UNVERIFIED();

  const nowSeconds = numberFromFloat(c.time / 1e9);
  const exp = payload.get(makeString("exp"));
  if (exp !== undefined) {
    if (exp.type !== "number") fail("exp value must be a number");
    if (compareNumbers(nowSeconds, exp) !== -1) return UNVERIFIED();
  }
  const nbf = payload.get(makeString("nbf"));
  if (nbf !== undefined) {
    if (nbf.type !== "number") fail("nbf value must be a number");
    if (compareNumbers(nowSeconds, nbf) === -1) return UNVERIFIED();
  }
  return makeArray([TRUE, header, payload]);
}

define("io.jwt.decode_verify", (args, ctx) => decodeVerify(args, ctx.now()));

// ------------------------------------------------------------------------------------ signing

/** The `alg` header as jwx reads it from the raw header JSON. */
function headerAlg(headers: string): { alg: string | undefined; typ: string | undefined } {
  const where = "missing or invalid 'alg' header";
  if (headers === "") fail(`${where}: cannot parse JSON: cannot parse empty string`);
  let parsed: Value;
  try {
    parsed = parseJSON(headers);
  } catch (e) {
    if (e instanceof JSONSyntaxError) fail(`${where}: cannot parse JSON: ${e.message}`);
    throw e;
  }
  if (parsed.type !== "object") fail(`${where}: value doesn't contain object; it contains ${parsed.type}`);
  const alg = parsed.get(makeString("alg"));
  const typ = parsed.get(makeString("typ"));
  if (alg !== undefined && alg.type !== "string") fail(`${where}: value doesn't contain string`);
  return { alg: alg?.value, typ: typ?.type === "string" ? typ.value : undefined };
}

function isValidJSON(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** `jwsbb.Sign`: the signature of `data` under the JWK's key for `alg`. */
function signWith(key: Key, alg: string, data: Buffer): Buffer {
  const hash = hashOf(alg);
  if (alg.startsWith("HS")) {
    if (!Buffer.isBuffer(key)) fail(`invalid key type for ${alg}: expected a symmetric key`);
    return createHmac(hash, key).update(data).digest();
  }
  if (Buffer.isBuffer(key) || key.type !== "private")
    fail(`invalid key type for ${alg}: expected a private key`);
  const type = alg.startsWith("ES") ? "ec" : alg === "EdDSA" ? "ed25519" : "rsa";
  if (key.asymmetricKeyType !== type) fail(`invalid key type for ${alg}: got ${key.asymmetricKeyType} key`);
  if (type === "ed25519") return cryptoSign(null, data, key);
  if (type === "ec") return cryptoSign(hash, data, { key, dsaEncoding: "ieee-p1363" });
  if (alg.startsWith("PS"))
    return cryptoSign(hash, data, {
      key,
      padding: cryptoConstants.RSA_PKCS1_PSS_PADDING,
      saltLength: cryptoConstants.RSA_PSS_SALTLEN_DIGEST,
    });
  return cryptoSign(hash, data, { key, padding: cryptoConstants.RSA_PKCS1_PADDING });
}

function encodeSign(headers: string, payload: string, jwkSrc: string): Value {
  let keys: Array<{ key: Key }>;
  try {
    keys = parseJwks(jwkSrc);
  } catch (e) {
    return fail(errorText(e));
  }
  const first = keys[0];
  if (!first) fail("no keys found in JWK set");
  const { alg, typ } = headerAlg(headers);
  if (alg === undefined) fail("unsupported signature algorithm");
  if (!ALGORITHMS.has(alg)) fail(`unknown JWS algorithm: ${alg}`);
  if ((typ === undefined || typ === "JWT") && !isValidJSON(payload))
    fail("type is JWT but payload is not JSON");
  const signingInput = `${Buffer.from(headers, "utf8").toString("base64url")}.${Buffer.from(payload, "utf8").toString("base64url")}`;
  const signature = signWith(first.key, alg, Buffer.from(signingInput, "utf8"));
  return makeString(`${signingInput}.${signature.toString("base64url")}`);
}

define("io.jwt.encode_sign_raw", (args) => {
  const jwk = stringArg(args, 2);
  return encodeSign(stringArg(args, 0), stringArg(args, 1), jwk);
});

define("io.jwt.encode_sign", (args) =>
  encodeSign(toJSONText(arg(args, 0)), toJSONText(arg(args, 1)), toJSONText(arg(args, 2))),
);
