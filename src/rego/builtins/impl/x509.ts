/**
 * X.509 certificates, certificate requests and private keys (`crypto.x509.*`,
 * `crypto.parse_private_keys`), after OPA's `topdown/crypto.go`. Results are shaped like Go's
 * JSON marshalling of `x509.Certificate` (byte strings in base64, times in RFC 3339, big
 * integers as numbers); a small DER reader supplies the fields `node:crypto` does not expose.
 */
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from "node:crypto";
import {
  FALSE,
  fromJSON,
  makeArray,
  makeObject,
  makeString,
  NULL,
  numberFromBigInt,
  type ObjectValue,
  TRUE,
  type Value,
} from "../../plan/value.ts";
import { BuiltinError, define, fail, objectArg, stringArg } from "../registry.ts";
import { Base64Error, goBase64Decode, pemDecode } from "./pem.ts";

// ------------------------------------------------------------------------------------ DER

interface Der {
  readonly tag: number;
  readonly constructed: boolean;
  /** The whole element (header and content). */
  readonly raw: Buffer;
  readonly content: Buffer;
}

function readDer(buf: Buffer, offset = 0): Der {
  const tag = buf[offset];
  let len = buf[offset + 1];
  if (tag === undefined || len === undefined) throw new Error("x509: malformed DER");
  let pos = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error("x509: malformed DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[pos + i] ?? 0);
    pos += n;
  }
  if (pos + len > buf.length) throw new Error("x509: truncated DER");
  return {
    tag,
    constructed: (tag & 0x20) !== 0,
    raw: buf.subarray(offset, pos + len),
    content: buf.subarray(pos, pos + len),
  };
}

function children(d: Der): Der[] {
  const out: Der[] = [];
  let off = 0;
  while (off < d.content.length) {
    const c = readDer(d.content, off);
    out.push(c);
    off += c.raw.length;
  }
  return out;
}

function oidOf(content: Buffer): number[] {
  const out: number[] = [];
  let v = 0;
  for (const b of content) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (out.length === 0) {
        const first = v < 80 ? Math.floor(v / 40) : 2;
        out.push(first, v - first * 40);
      } else out.push(v);
      v = 0;
    }
  }
  return out;
}

function bigIntOf(content: Buffer): bigint {
  if (content.length === 0) return 0n;
  let v = BigInt(`0x${content.toString("hex")}`);
  if ((content[0] ?? 0) & 0x80) v -= 1n << BigInt(content.length * 8);
  return v;
}

function smallIntOf(content: Buffer): number {
  return Number(bigIntOf(content));
}

function stringOf(d: Der): string {
  if (d.tag === 0x1e) {
    // BMPString: UTF-16BE.
    const swapped = Buffer.from(d.content);
    swapped.swap16();
    return swapped.toString("utf16le");
  }
  return d.content.toString(d.tag === 0x0c ? "utf8" : "latin1");
}

/** Go's time.Time JSON (RFC 3339, UTC) from a UTCTime or GeneralizedTime. */
function timeOf(d: Der): string {
  const s = d.content.toString("latin1");
  let year: number;
  let rest: string;
  if (d.tag === 0x17) {
    const yy = Number(s.slice(0, 2));
    year = yy >= 50 ? 1900 + yy : 2000 + yy;
    rest = s.slice(2);
  } else {
    year = Number(s.slice(0, 4));
    rest = s.slice(4);
  }
  const [mo, dd, hh, mi, ss] = [0, 2, 4, 6, 8].map((i) => rest.slice(i, i + 2));
  return `${String(year).padStart(4, "0")}-${mo}-${dd}T${hh}:${mi}:${ss}Z`;
}

const bytesJSON = (b: Buffer): Value => makeString(b.toString("base64"));
const oidJSON = (oid: number[]): Value => makeArray(oid.map((n) => numberFromBigInt(BigInt(n))));
const num = (n: number | bigint): Value => numberFromBigInt(BigInt(n));
const strs = (xs: string[]): Value => (xs.length === 0 ? NULL : makeArray(xs.map((x) => makeString(x))));
const obj = (fields: Record<string, Value>): ObjectValue =>
  makeObject(Object.entries(fields).map(([k, v]) => [makeString(k), v]));

// ------------------------------------------------------------------------------------ names

const NAME_FIELDS: Record<string, string> = {
  "2.5.4.6": "Country",
  "2.5.4.10": "Organization",
  "2.5.4.11": "OrganizationalUnit",
  "2.5.4.7": "Locality",
  "2.5.4.8": "Province",
  "2.5.4.9": "StreetAddress",
  "2.5.4.17": "PostalCode",
};

/** Go's `pkix.Name` JSON from an RDNSequence. */
function nameJSON(d: Der): Value {
  const lists: Record<string, string[]> = {};
  for (const f of Object.values(NAME_FIELDS)) lists[f] = [];
  let commonName = "";
  let serialNumber = "";
  const names: Value[] = [];
  for (const rdn of children(d)) {
    for (const atv of children(rdn)) {
      const [typ, val] = children(atv);
      if (!typ || !val) continue;
      const oid = oidOf(typ.content);
      const value = stringOf(val);
      names.push(obj({ Type: oidJSON(oid), Value: makeString(value) }));
      const key = oid.join(".");
      if (key === "2.5.4.3") commonName = value;
      else if (key === "2.5.4.5") serialNumber = value;
      else {
        const field = NAME_FIELDS[key];
        if (field) lists[field]?.push(value);
      }
    }
  }
  const fields: Record<string, Value> = {};
  for (const f of Object.values(NAME_FIELDS)) fields[f] = strs(lists[f] ?? []);
  return obj({
    ...fields,
    SerialNumber: makeString(serialNumber),
    CommonName: makeString(commonName),
    Names: makeArray(names),
    ExtraNames: NULL,
  });
}

// ------------------------------------------------------------------------------------ algorithms

const SIGNATURE_ALGORITHMS: Record<string, number> = {
  "1.2.840.113549.1.1.2": 1,
  "1.2.840.113549.1.1.4": 2,
  "1.2.840.113549.1.1.5": 3,
  "1.2.840.113549.1.1.11": 4,
  "1.2.840.113549.1.1.12": 5,
  "1.2.840.113549.1.1.13": 6,
  "1.2.840.10040.4.3": 7,
  "2.16.840.1.101.3.4.3.2": 8,
  "1.2.840.10045.4.1": 9,
  "1.2.840.10045.4.3.2": 10,
  "1.2.840.10045.4.3.3": 11,
  "1.2.840.10045.4.3.4": 12,
  "1.3.101.112": 16,
};

const PSS_HASHES: Record<string, number> = {
  "2.16.840.1.101.3.4.2.1": 13,
  "2.16.840.1.101.3.4.2.2": 14,
  "2.16.840.1.101.3.4.2.3": 15,
};

function signatureAlgorithm(algId: Der): number {
  const [oid, params] = children(algId);
  if (!oid) return 0;
  const key = oidOf(oid.content).join(".");
  if (key === "1.2.840.113549.1.1.10") {
    // RSASSA-PSS: the hash is the first (explicit [0]) parameter.
    const hashAlg = params ? children(params)[0] : undefined;
    const inner = hashAlg ? children(hashAlg)[0] : undefined;
    const hashOid = inner ? children(inner)[0] : undefined;
    return hashOid ? (PSS_HASHES[oidOf(hashOid.content).join(".")] ?? 0) : 0;
  }
  return SIGNATURE_ALGORITHMS[key] ?? 0;
}

const PUBLIC_KEY_ALGORITHMS: Record<string, number> = {
  "1.2.840.113549.1.1.1": 1,
  "1.2.840.10040.4.1": 2,
  "1.2.840.10045.2.1": 3,
  "1.3.101.112": 4,
};

function b64urlBig(s: string | undefined): bigint {
  return s ? BigInt(`0x${Buffer.from(s, "base64url").toString("hex") || "0"}`) : 0n;
}

/** Go's JSON of a public key: RSA `{N, E}`, ECDSA `{Curve, X, Y}`, Ed25519 bytes. */
function publicKeyJSON(key: KeyObject): Value {
  const jwk = key.export({ format: "jwk" });
  switch (key.asymmetricKeyType) {
    case "rsa":
      return obj({ N: num(b64urlBig(jwk.n)), E: num(b64urlBig(jwk.e)) });
    case "ec":
      return obj({ Curve: makeObject(), X: num(b64urlBig(jwk.x)), Y: num(b64urlBig(jwk.y)) });
    case "ed25519":
      return makeString(Buffer.from(jwk.x ?? "", "base64url").toString("base64"));
    default:
      return NULL;
  }
}

/** Go's JSON of a private key (`rsa.PrivateKey`, `ecdsa.PrivateKey`, `ed25519.PrivateKey`). */
function privateKeyJSON(key: KeyObject): Value {
  const jwk = key.export({ format: "jwk" });
  switch (key.asymmetricKeyType) {
    case "rsa": {
      const p = b64urlBig(jwk.p);
      const q = b64urlBig(jwk.q);
      return obj({
        N: num(b64urlBig(jwk.n)),
        E: num(b64urlBig(jwk.e)),
        D: num(b64urlBig(jwk.d)),
        Primes: makeArray([num(p), num(q)]),
        Precomputed: obj({
          Dp: num(b64urlBig(jwk.dp)),
          Dq: num(b64urlBig(jwk.dq)),
          Qinv: num(b64urlBig(jwk.qi)),
          CRTValues: makeArray(),
        }),
      });
    }
    case "ec":
      return obj({
        Curve: makeObject(),
        X: num(b64urlBig(jwk.x)),
        Y: num(b64urlBig(jwk.y)),
        D: num(b64urlBig(jwk.d)),
      });
    case "ed25519": {
      const seed = Buffer.from(jwk.d ?? "", "base64url");
      const pub = Buffer.from(jwk.x ?? "", "base64url");
      return makeString(Buffer.concat([seed, pub]).toString("base64"));
    }
    default:
      return NULL;
  }
}

// ------------------------------------------------------------------------------------ extensions

const EXT_KEY_USAGES: Record<string, number> = {
  "2.5.29.37.0": 0,
  "1.3.6.1.5.5.7.3.1": 1,
  "1.3.6.1.5.5.7.3.2": 2,
  "1.3.6.1.5.5.7.3.3": 3,
  "1.3.6.1.5.5.7.3.4": 4,
  "1.3.6.1.5.5.7.3.5": 5,
  "1.3.6.1.5.5.7.3.6": 6,
  "1.3.6.1.5.5.7.3.7": 7,
  "1.3.6.1.5.5.7.3.8": 8,
  "1.3.6.1.5.5.7.3.9": 9,
  "1.3.6.1.4.1.311.10.3.3": 10,
  "2.16.840.1.113730.4.1": 11,
  "1.3.6.1.4.1.311.2.1.22": 12,
  "1.3.6.1.4.1.311.61.1.1": 13,
};

function ipString(b: Buffer): string {
  if (b.length === 4) return [...b].join(".");
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  // Go's net.IP.String: the longest run of zero groups collapses to "::".
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < groups.length; ) {
    let j = i;
    while (j < groups.length && groups[j] === "0") j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}

interface Parsed {
  fields: Record<string, Value>;
  uris: string[];
}

/** Go's `url.URL` JSON for a URI SAN (the fields Go's parser fills for absolute URIs). */
function urlJSON(s: string): Value {
  let u: URL | undefined;
  try {
    u = new URL(s);
  } catch {
    u = undefined;
  }
  const scheme = u ? u.protocol.replace(/:$/, "") : "";
  return obj({
    Scheme: makeString(scheme),
    Opaque: makeString(""),
    User: NULL,
    Host: makeString(u ? u.host : ""),
    Path: makeString(u ? decodeURIComponent(u.pathname) : s),
    RawPath: makeString(""),
    OmitHost: FALSE,
    ForceQuery: FALSE,
    RawQuery: makeString(u ? u.search.replace(/^\?/, "") : ""),
    Fragment: makeString(u ? decodeURIComponent(u.hash.replace(/^#/, "")) : ""),
    RawFragment: makeString(""),
  });
}

function applyExtensions(exts: Der[], out: Parsed): void {
  const f = out.fields;
  const dns: string[] = [];
  const emails: string[] = [];
  const ips: string[] = [];
  const extList: Value[] = [];
  for (const ext of exts) {
    const parts = children(ext);
    const oidD = parts[0];
    if (!oidD) continue;
    const critical = parts.length === 3 && parts[1]?.tag === 0x01 && (parts[1].content[0] ?? 0) !== 0;
    const valueD = parts[parts.length - 1];
    if (!valueD) continue;
    const oid = oidOf(oidD.content);
    extList.push(
      obj({ Id: oidJSON(oid), Critical: critical ? TRUE : FALSE, Value: bytesJSON(valueD.content) }),
    );
    const inner = () => readDer(valueD.content);
    switch (oid.join(".")) {
      case "2.5.29.17":
        for (const gn of children(inner())) {
          const tagNo = gn.tag & 0x1f;
          if (tagNo === 1) emails.push(gn.content.toString("latin1"));
          else if (tagNo === 2) dns.push(gn.content.toString("latin1"));
          else if (tagNo === 6) out.uris.push(gn.content.toString("latin1"));
          else if (tagNo === 7) ips.push(ipString(gn.content));
        }
        break;
      case "2.5.29.19": {
        const bc = children(inner());
        let isCA = false;
        let maxPathLen = -1;
        for (const c of bc) {
          if (c.tag === 0x01) isCA = (c.content[0] ?? 0) !== 0;
          else if (c.tag === 0x02) maxPathLen = smallIntOf(c.content);
        }
        f.BasicConstraintsValid = TRUE;
        f.IsCA = isCA ? TRUE : FALSE;
        f.MaxPathLen = num(maxPathLen);
        f.MaxPathLenZero = maxPathLen === 0 ? TRUE : FALSE;
        break;
      }
      case "2.5.29.15": {
        const bits = inner().content;
        let usage = 0;
        for (let i = 0; i < 9; i++) {
          const byte = bits[1 + Math.floor(i / 8)] ?? 0;
          if (byte & (0x80 >> (i % 8))) usage |= 1 << i;
        }
        f.KeyUsage = num(usage);
        break;
      }
      case "2.5.29.37": {
        const known: Value[] = [];
        const unknown: Value[] = [];
        for (const o of children(inner())) {
          const id = oidOf(o.content);
          const k = EXT_KEY_USAGES[id.join(".")];
          if (k === undefined) unknown.push(oidJSON(id));
          else known.push(num(k));
        }
        f.ExtKeyUsage = known.length ? makeArray(known) : NULL;
        f.UnknownExtKeyUsage = unknown.length ? makeArray(unknown) : NULL;
        break;
      }
      case "2.5.29.14":
        f.SubjectKeyId = bytesJSON(inner().content);
        break;
      case "2.5.29.35":
        for (const c of children(inner()))
          if ((c.tag & 0x1f) === 0 && !c.constructed) f.AuthorityKeyId = bytesJSON(c.content);
        break;
    }
  }
  f.Extensions = extList.length ? makeArray(extList) : NULL;
  f.DNSNames = strs(dns);
  f.EmailAddresses = strs(emails);
  f.IPAddresses = strs(ips);
}

/** Go's `x509.Certificate` JSON, plus OPA's `URIStrings`. */
function certificateJSON(der: Buffer, cert: X509Certificate, uriStrings = true): ObjectValue {
  const top = readDer(der);
  const [tbs, sigAlg, sigValue] = children(top);
  if (!tbs || !sigAlg || !sigValue) throw new Error("x509: malformed certificate");
  const t = children(tbs);
  let i = 0;
  let version = 1;
  const first = t[0];
  if (first && first.tag === 0xa0) {
    const v = children(first)[0];
    version = (v ? smallIntOf(v.content) : 0) + 1;
    i++;
  }
  const [serial, , issuer, validity, subject, spki] = t.slice(i);
  if (!serial || !issuer || !validity || !subject || !spki) throw new Error("x509: malformed certificate");
  const [notBefore, notAfter] = children(validity);
  const spkiAlg = children(children(spki)[0] ?? spki)[0];
  const out: Parsed = {
    fields: {
      Raw: bytesJSON(top.raw),
      RawTBSCertificate: bytesJSON(tbs.raw),
      RawSubjectPublicKeyInfo: bytesJSON(spki.raw),
      RawSubject: bytesJSON(subject.raw),
      RawIssuer: bytesJSON(issuer.raw),
      Signature: bytesJSON(sigValue.content.subarray(1)),
      SignatureAlgorithm: num(signatureAlgorithm(sigAlg)),
      PublicKeyAlgorithm: num(spkiAlg ? (PUBLIC_KEY_ALGORITHMS[oidOf(spkiAlg.content).join(".")] ?? 0) : 0),
      PublicKey: publicKeyJSON(cert.publicKey),
      Version: num(version),
      SerialNumber: num(bigIntOf(serial.content)),
      Issuer: nameJSON(issuer),
      Subject: nameJSON(subject),
      NotBefore: makeString(notBefore ? timeOf(notBefore) : ""),
      NotAfter: makeString(notAfter ? timeOf(notAfter) : ""),
      KeyUsage: num(0),
      Extensions: NULL,
      ExtraExtensions: NULL,
      UnhandledCriticalExtensions: NULL,
      ExtKeyUsage: NULL,
      UnknownExtKeyUsage: NULL,
      BasicConstraintsValid: FALSE,
      IsCA: FALSE,
      MaxPathLen: num(0),
      MaxPathLenZero: FALSE,
      SubjectKeyId: NULL,
      AuthorityKeyId: NULL,
      OCSPServer: NULL,
      IssuingCertificateURL: NULL,
      DNSNames: NULL,
      EmailAddresses: NULL,
      IPAddresses: NULL,
      URIs: NULL,
      PermittedDNSDomainsCritical: FALSE,
      PermittedDNSDomains: NULL,
      ExcludedDNSDomains: NULL,
      PermittedIPRanges: NULL,
      ExcludedIPRanges: NULL,
      PermittedEmailAddresses: NULL,
      ExcludedEmailAddresses: NULL,
      PermittedURIDomains: NULL,
      ExcludedURIDomains: NULL,
      CRLDistributionPoints: NULL,
      PolicyIdentifiers: NULL,
      Policies: NULL,
      InhibitAnyPolicy: num(0),
      InhibitAnyPolicyZero: FALSE,
      InhibitPolicyMapping: num(0),
      InhibitPolicyMappingZero: FALSE,
      RequireExplicitPolicy: num(0),
      RequireExplicitPolicyZero: FALSE,
      PolicyMappings: NULL,
    },
    uris: [],
  };
  const extWrapper = t.slice(i + 6).find((d) => d.tag === 0xa3);
  const extSeq = extWrapper ? children(extWrapper)[0] : undefined;
  if (extSeq) applyExtensions(children(extSeq), out);
  out.fields.URIs = out.uris.length ? makeArray(out.uris.map(urlJSON)) : NULL;
  if (uriStrings) out.fields.URIStrings = strs(out.uris);
  return obj(out.fields);
}

// ------------------------------------------------------------------------------------ parsing inputs

interface Cert {
  readonly der: Buffer;
  readonly x509: X509Certificate;
}

function goStdBase64(s: string): Buffer {
  try {
    return goBase64Decode(Buffer.from(s, "utf8"), false);
  } catch (e) {
    if (e instanceof Base64Error) fail(e.message);
    throw e;
  }
}

/** Go's `x509.ParseCertificates`: concatenated DER certificates. */
function parseDerCertificates(der: Buffer): Cert[] {
  const certs: Cert[] = [];
  let off = 0;
  while (off < der.length) {
    let one: Buffer;
    let x509: X509Certificate;
    try {
      one = readDer(der, off).raw;
      x509 = new X509Certificate(one);
    } catch (e) {
      return fail(`x509: malformed certificate${e instanceof Error ? ` (${e.message})` : ""}`);
    }
    certs.push({ der: one, x509 });
    off += one.length;
  }
  return certs;
}

function certsFromPem(data: Buffer): Cert[] {
  const ders: Buffer[] = [];
  let rest = data;
  while (rest.length > 0) {
    const p = pemDecode(rest);
    if (!p) break;
    if (p.block.type !== "CERTIFICATE") fail(`PEM block type is '${p.block.type}', expected CERTIFICATE`);
    ders.push(p.block.bytes);
    rest = p.rest;
  }
  return parseDerCertificates(Buffer.concat(ders));
}

/** OPA's `getX509CertsFromString`: PEM, base64 of PEM, or base64 of DER. */
function certsFromString(s: string): Cert[] {
  if (s.startsWith("-----BEGIN")) return certsFromPem(Buffer.from(s, "utf8"));
  const bytes = goStdBase64(s);
  if (bytes.subarray(0, 10).toString("latin1") === "-----BEGIN") return certsFromPem(bytes);
  return parseDerCertificates(bytes);
}

define("crypto.x509.parse_certificates", (args) => {
  const certs = certsFromString(stringArg(args, 0));
  return makeArray(certs.map((c) => certificateJSON(c.der, c.x509)));
});

// ------------------------------------------------------------------------------------ verification

interface VerifyOptions {
  dnsName: string;
  /** Milliseconds since the epoch, or undefined for the system clock. */
  currentTime: number | undefined;
  keyUsages: number[];
}

function extKeyUsagesOf(c: Cert): number[] | undefined {
  const usages = c.x509.keyUsage;
  if (!usages) return undefined;
  return usages.map((oid) => EXT_KEY_USAGES[oid] ?? -1);
}

function withinValidity(c: Cert, now: number): boolean {
  return now >= Date.parse(c.x509.validFrom) && now <= Date.parse(c.x509.validTo);
}

/** Whether the chain (leaf first) permits one of the requested extended key usages. */
function chainAllows(chain: Cert[], wanted: number[]): boolean {
  const requested = wanted.length === 0 ? [1] : wanted;
  if (requested.includes(0)) return true;
  let allowed: Set<number> | undefined;
  for (const c of chain) {
    const eku = extKeyUsagesOf(c);
    if (eku === undefined || eku.includes(0)) continue;
    const set = new Set(eku);
    allowed = allowed ? new Set([...allowed].filter((u) => set.has(u))) : set;
  }
  return allowed === undefined || requested.some((u) => allowed?.has(u));
}

function signedBy(child: Cert, parent: Cert): boolean {
  try {
    return child.x509.checkIssued(parent.x509) && child.x509.verify(parent.x509.publicKey);
  } catch {
    return false;
  }
}

function isCA(c: Cert): boolean {
  return c.x509.ca;
}

/**
 * Go's `Certificate.Verify` as OPA calls it: the first certificate is the only root, the last is
 * the leaf, the rest are intermediates. Returns the first chain found (leaf first).
 */
function verifyChain(certs: Cert[], opts: VerifyOptions): Cert[] | undefined {
  if (certs.length < 2) return undefined;
  const root = certs[0];
  const leaf = certs[certs.length - 1];
  if (!root || !leaf) return undefined;
  const intermediates = certs.slice(1, -1);
  const now = opts.currentTime ?? Date.now();
  if (opts.dnsName !== "" && leaf.x509.checkHost(opts.dnsName) === undefined) return undefined;

  const search = (chain: Cert[]): Cert[] | undefined => {
    const current = chain[chain.length - 1];
    if (!current || !withinValidity(current, now)) return undefined;
    if (chain.length > 1 && !isCA(current)) return undefined;
    if (current.der.equals(root.der)) return chain;
    if (signedBy(current, root) && withinValidity(root, now) && isCA(root)) return [...chain, root];
    for (const next of intermediates) {
      if (chain.some((c) => c.der.equals(next.der))) continue;
      if (!signedBy(current, next)) continue;
      const found = search([...chain, next]);
      if (found) return found;
    }
    return undefined;
  };
  const chain = search([leaf]);
  if (!chain || !chainAllows(chain, opts.keyUsages)) return undefined;
  return chain;
}

const NOT_VERIFIED = (): Value => makeArray([FALSE, makeArray()]);

function parseAndVerify(
  input: string,
  opts: VerifyOptions | (() => VerifyOptions),
  uriStrings: boolean,
): Value {
  let certs: Cert[];
  try {
    certs = certsFromString(input);
  } catch (e) {
    if (e instanceof BuiltinError) return NOT_VERIFIED();
    throw e;
  }
  const options = typeof opts === "function" ? opts() : opts;
  const chain = verifyChain(certs, options);
  if (!chain) return NOT_VERIFIED();
  return makeArray([TRUE, makeArray(chain.map((c) => certificateJSON(c.der, c.x509, uriStrings)))]);
}

define("crypto.x509.parse_and_verify_certificates", (args) =>
  parseAndVerify(stringArg(args, 0), { dnsName: "", currentTime: undefined, keyUsages: [] }, true),
);

const KEY_USAGE_NAMES: Record<string, number> = {
  KeyUsageAny: 0,
  KeyUsageServerAuth: 1,
  KeyUsageClientAuth: 2,
  KeyUsageCodeSigning: 3,
  KeyUsageEmailProtection: 4,
  KeyUsageIPSECEndSystem: 5,
  KeyUsageIPSECTunnel: 6,
  KeyUsageIPSECUser: 7,
  KeyUsageTimeStamping: 8,
  KeyUsageOCSPSigning: 9,
  KeyUsageMicrosoftServerGatedCrypto: 10,
  KeyUsageNetscapeServerGatedCrypto: 11,
  KeyUsageMicrosoftCommercialCodeSigning: 12,
  KeyUsageMicrosoftKernelCodeSigning: 13,
};

/** OPA's `extractVerifyOpts`. */
function verifyOptions(o: ObjectValue): VerifyOptions {
  const opts: VerifyOptions = { dnsName: "", currentTime: undefined, keyUsages: [] };
  for (const [k, v] of o.entries()) {
    if (k.type !== "string") continue;
    switch (k.value) {
      case "DNSName":
        if (v.type !== "string") fail("'DNSName' should be a string");
        opts.dnsName = v.value.replace(/^"+|"+$/g, "");
        break;
      case "CurrentTime":
        if (v.type !== "number") fail("'CurrentTime' should be a number");
        if (v.int === undefined || v.int < -(2n ** 63n) || v.int >= 2n ** 63n)
          fail("'CurrentTime' should be a valid int64 number");
        opts.currentTime = Number(v.int / 1_000_000n);
        break;
      case "MaxConstraintComparisons":
        if (v.type !== "number") fail("'MaxConstraintComparisons' should be a number");
        if (v.int === undefined) fail("'MaxConstraintComparisons' should be a valid number");
        break;
      case "KeyUsages": {
        const items = v.type === "array" ? v.items : v.type === "set" ? v.elements() : undefined;
        if (!items) fail("'KeyUsages' should be an Array or Set");
        const invalid: string[] = [];
        for (const item of items) {
          if (item.type !== "string") continue;
          const name = item.value.replace(/^"+|"+$/g, "");
          const usage = KEY_USAGE_NAMES[name];
          if (usage === undefined) invalid.push(name);
          else opts.keyUsages.push(usage);
        }
        if (invalid.length > 0) fail(`invalid entries for 'KeyUsages' found: [${invalid.join(" ")}]`);
        break;
      }
      default:
        fail("invalid key option");
    }
  }
  return opts;
}

define("crypto.x509.parse_and_verify_certificates_with_options", (args) => {
  const input = stringArg(args, 0);
  const options = objectArg(args, 1);
  return parseAndVerify(input, () => verifyOptions(options), false);
});

// ------------------------------------------------------------------------------------ private keys

const PRIVATE_KEY_TYPES: Record<string, "pkcs1" | "pkcs8" | "sec1"> = {
  "RSA PRIVATE KEY": "pkcs1",
  "PRIVATE KEY": "pkcs8",
  "EC PRIVATE KEY": "sec1",
};

function importPrivateKey(der: Buffer, type: "pkcs1" | "pkcs8" | "sec1"): KeyObject {
  try {
    return createPrivateKey({ key: der, format: "der", type });
  } catch (e) {
    return fail(`x509: failed to parse private key${e instanceof Error ? ` (${e.message})` : ""}`);
  }
}

/** OPA's `getPrivateKeysFromPEMData`: the private keys among the PEM blocks (base64 accepted). */
function privateKeysFromPem(data: string): KeyObject[] {
  let text: Buffer = Buffer.from(data, "utf8");
  try {
    text = goBase64Decode(text, false);
  } catch (e) {
    if (!(e instanceof Base64Error)) throw e;
  }
  const keys: KeyObject[] = [];
  let rest: Buffer = text;
  while (rest.length > 0) {
    const p = pemDecode(rest);
    if (!p) break;
    rest = p.rest;
    const type = PRIVATE_KEY_TYPES[p.block.type];
    if (type) keys.push(importPrivateKey(p.block.bytes, type));
  }
  return keys;
}

define("crypto.parse_private_keys", (args) => {
  const input = stringArg(args, 0);
  if (input === "") return NULL;
  return makeArray(privateKeysFromPem(input).map(privateKeyJSON));
});

define("crypto.x509.parse_rsa_private_key", (args) => {
  let input = stringArg(args, 0);
  if (input === "") fail("input PEM data was empty");
  if (!input.startsWith("-----BEGIN")) input = goStdBase64(input).toString("utf8");
  const [first] = privateKeysFromPem(input);
  if (!first) return NULL;
  return fromJSON(first.export({ format: "jwk" }));
});

// ------------------------------------------------------------------------------------ key pairs

/** Go's `tls.X509KeyPair` result: `{Certificate: [DER…], PrivateKey, Leaf, …}`. */
define("crypto.x509.parse_keypair", (args) => {
  const certText = stringArg(args, 0);
  const keyText = stringArg(args, 1);
  const certBytes = certText.startsWith("-----BEGIN ")
    ? Buffer.from(certText, "utf8")
    : goStdBase64(certText);
  const keyBytes = keyText.startsWith("-----BEGIN ") ? Buffer.from(keyText, "utf8") : goStdBase64(keyText);

  const ders: Buffer[] = [];
  if (certBytes.subarray(0, 11).toString("latin1") === "-----BEGIN ") {
    let rest = certBytes;
    for (;;) {
      const p = pemDecode(rest);
      if (!p) break;
      rest = p.rest;
      if (p.block.type === "CERTIFICATE") ders.push(p.block.bytes);
    }
  } else ders.push(certBytes);
  if (ders.length === 0) fail("tls: failed to find any PEM data in certificate input");

  let keyDer: Buffer | undefined;
  let keyType: "pkcs1" | "pkcs8" | "sec1" = "pkcs8";
  if (keyBytes.subarray(0, 10).toString("latin1") === "-----BEGIN") {
    let rest = keyBytes;
    for (;;) {
      const p = pemDecode(rest);
      if (!p) break;
      rest = p.rest;
      if (p.block.type === "PRIVATE KEY" || p.block.type.endsWith(" PRIVATE KEY")) {
        keyDer = p.block.bytes;
        keyType = PRIVATE_KEY_TYPES[p.block.type] ?? "pkcs8";
        break;
      }
    }
  } else keyDer = keyBytes;
  if (!keyDer) fail("tls: failed to find any PEM data in key input");

  let leaf: X509Certificate;
  let key: KeyObject;
  try {
    leaf = new X509Certificate(ders[0] ?? Buffer.alloc(0));
  } catch (e) {
    return fail(`x509: malformed certificate${e instanceof Error ? ` (${e.message})` : ""}`);
  }
  try {
    key = createPrivateKey({ key: keyDer, format: "der", type: keyType });
  } catch {
    return fail("tls: failed to parse private key");
  }
  if (!leaf.checkPrivateKey(key)) fail("tls: private key does not match public key");
  return obj({
    Certificate: makeArray(ders.map(bytesJSON)),
    PrivateKey: privateKeyJSON(key),
    SupportedSignatureAlgorithms: NULL,
    OCSPStaple: NULL,
    SignedCertificateTimestamps: NULL,
    Leaf: certificateJSON(ders[0] ?? Buffer.alloc(0), leaf),
  });
});

// ------------------------------------------------------------------------------------ certificate requests

/** Go's `x509.CertificateRequest` JSON. */
function certificateRequestJSON(der: Buffer): Value {
  const top = readDer(der);
  const [info, sigAlg, sigValue] = children(top);
  if (!info || !sigAlg || !sigValue) throw new Error("x509: malformed certificate request");
  const [version, subject, spki, attrs] = children(info);
  if (!version || !subject || !spki) throw new Error("x509: malformed certificate request");
  let publicKey: Value = NULL;
  try {
    publicKey = publicKeyJSON(createPublicKey({ key: spki.raw, format: "der", type: "spki" }));
  } catch {
    publicKey = NULL;
  }
  const spkiAlg = children(children(spki)[0] ?? spki)[0];
  const out: Parsed = {
    fields: {
      Raw: bytesJSON(top.raw),
      RawTBSCertificateRequest: bytesJSON(info.raw),
      RawSubjectPublicKeyInfo: bytesJSON(spki.raw),
      RawSubject: bytesJSON(subject.raw),
      Version: num(smallIntOf(version.content)),
      Signature: bytesJSON(sigValue.content.subarray(1)),
      SignatureAlgorithm: num(signatureAlgorithm(sigAlg)),
      PublicKeyAlgorithm: num(spkiAlg ? (PUBLIC_KEY_ALGORITHMS[oidOf(spkiAlg.content).join(".")] ?? 0) : 0),
      PublicKey: publicKey,
      Subject: nameJSON(subject),
      Attributes: NULL,
      Extensions: NULL,
      ExtraExtensions: NULL,
      DNSNames: NULL,
      EmailAddresses: NULL,
      IPAddresses: NULL,
      URIs: NULL,
    },
    uris: [],
  };
  // Extensions come from the PKCS #9 extensionRequest attribute.
  if (attrs && attrs.tag === 0xa0) {
    for (const attr of children(attrs)) {
      const [oid, values] = children(attr);
      if (!oid || !values || oidOf(oid.content).join(".") !== "1.2.840.113549.1.9.14") continue;
      const seq = children(values)[0];
      if (seq) applyExtensions(children(seq), out);
    }
  }
  out.fields.URIs = out.uris.length ? makeArray(out.uris.map(urlJSON)) : NULL;
  return obj(out.fields);
}

define("crypto.x509.parse_certificate_request", (args) => {
  const input = stringArg(args, 0);
  let bytes = input.startsWith("-----BEGIN CERTIFICATE REQUEST-----")
    ? Buffer.from(input, "utf8")
    : goStdBase64(input);
  const p = pemDecode(bytes);
  if (p && p.block.type !== "CERTIFICATE REQUEST") fail("invalid PEM-encoded certificate signing request");
  if (p) bytes = p.block.bytes;
  try {
    return certificateRequestJSON(bytes);
  } catch (e) {
    if (e instanceof BuiltinError) throw e;
    return fail(e instanceof Error ? e.message : "x509: malformed certificate request");
  }
});
