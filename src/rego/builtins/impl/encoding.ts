/**
 * Encoding builtins: `hex.*`, `base64.is_valid`, `urlquery.*` and `uri.*`, following OPA's
 * `v1/topdown/encoding.go` and `uri.go`, which use Go's `encoding/hex`, `encoding/base64` and
 * `net/url`. The Go functions are ported here byte for byte (they work on UTF-8 bytes), so that
 * escaping, parsing and error messages are Go's.
 */
import {
  compareStrings,
  makeArray,
  makeBoolean,
  makeObject,
  toJSONText,
  type Value,
} from "../../plan/value.ts";
import { arg, BuiltinError, define, fail, objectArg, str, stringArg } from "../registry.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Go's `string(bytes)` as JavaScript text (invalid UTF-8 becomes U+FFFD). */
function bytesText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Go's `%#U` of a byte read as a rune: `U+0067 'g'`, or `U+0007` when not printable. */
function goRuneU(b: number): string {
  const code = `U+${b.toString(16).toUpperCase().padStart(4, "0")}`;
  const ch = String.fromCharCode(b);
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch) ? `${code} '${ch}'` : code;
}

// ------------------------------------------------------------------------------------ hex

const HEX_DIGITS = "0123456789abcdef";

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  return -1;
}

/** Go's `hex.DecodeString`, with its errors. */
export function hexDecode(s: string): Uint8Array {
  const src = utf8Bytes(s);
  const out = new Uint8Array(src.length >> 1);
  let j = 1;
  for (; j < src.length; j += 2) {
    const p = src[j - 1]!;
    const q = src[j]!;
    const a = hexValue(p);
    const b = hexValue(q);
    if (a < 0) fail(`encoding/hex: invalid byte: ${goRuneU(p)}`);
    if (b < 0) fail(`encoding/hex: invalid byte: ${goRuneU(q)}`);
    out[(j - 1) >> 1] = (a << 4) | b;
  }
  if (src.length % 2 === 1) {
    const last = src[j - 1]!;
    if (hexValue(last) < 0) fail(`encoding/hex: invalid byte: ${goRuneU(last)}`);
    fail("encoding/hex: odd length hex string");
  }
  return out;
}

define("hex.encode", (args) => {
  let out = "";
  for (const b of utf8Bytes(stringArg(args, 0))) out += HEX_DIGITS[b >> 4]! + HEX_DIGITS[b & 15]!;
  return str(out);
});
define("hex.decode", (args) => str(bytesText(hexDecode(stringArg(args, 0)))));

// ------------------------------------------------------------------------------------ base64

const BASE64_ALPHABET = /^[A-Za-z0-9+/]$/;

/** Whether Go's `base64.StdEncoding.DecodeString` accepts `s` (padding required, CR/LF ignored). */
export function isValidStdBase64(s: string): boolean {
  const chars = [...s].filter((c) => c !== "\r" && c !== "\n");
  if (chars.length % 4 !== 0) return false;
  for (let i = 0; i < chars.length; i += 4) {
    const quantum = chars.slice(i, i + 4);
    const last = i + 4 === chars.length;
    const pad = quantum.indexOf("=");
    if (pad === -1) {
      if (!quantum.every((c) => BASE64_ALPHABET.test(c))) return false;
      continue;
    }
    // Padding may only end the input: "xx==" or "xxx=".
    if (!last || pad < 2) return false;
    if (!quantum.slice(0, pad).every((c) => BASE64_ALPHABET.test(c))) return false;
    if (!quantum.slice(pad).every((c) => c === "=")) return false;
  }
  return true;
}

define("base64.is_valid", (args) => {
  const v = arg(args, 0);
  return makeBoolean(v.type === "string" && isValidStdBase64(v.value));
});

// ------------------------------------------------------------------------------------ net/url

type EscapeMode = "path" | "pathSegment" | "host" | "zone" | "userPassword" | "queryComponent" | "fragment";

/** Go's `url.shouldEscape`. */
function shouldEscape(c: number, mode: EscapeMode): boolean {
  // §2.3 unreserved characters
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false;
  const ch = String.fromCharCode(c);
  if (mode === "host" || mode === "zone") {
    if ("!$&'()*+,;=:[]<>\"".includes(ch)) return false;
  }
  switch (ch) {
    case "-":
    case "_":
    case ".":
    case "~":
      return false;
    case "$":
    case "&":
    case "+":
    case ",":
    case "/":
    case ":":
    case ";":
    case "=":
    case "?":
    case "@":
      switch (mode) {
        case "path":
          return ch === "?";
        case "pathSegment":
          return ch === "/" || ch === ";" || ch === "," || ch === "?";
        case "userPassword":
          return ch === "@" || ch === "/" || ch === "?" || ch === ":";
        case "queryComponent":
          return true;
        case "fragment":
          return false;
        default:
          break;
      }
  }
  if (mode === "fragment" && (ch === "!" || ch === "(" || ch === ")" || ch === "*")) return false;
  return true;
}

function ishex(c: number | undefined): boolean {
  return c !== undefined && hexValue(c) >= 0;
}

/** Go's `url.unescape`: the decoded text, or a Go error message. */
function urlUnescape(
  s: string,
  mode: EscapeMode,
): { ok: true; value: string } | { ok: false; error: string } {
  const b = utf8Bytes(s);
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c === 0x25) {
      n++;
      if (i + 2 >= b.length || !ishex(b[i + 1]) || !ishex(b[i + 2])) {
        return { ok: false, error: `invalid URL escape ${goQuoteBytes(b.subarray(i, i + 3))}` };
      }
      if (mode === "host" && hexValue(b[i + 1]!) < 8 && bytesText(b.subarray(i, i + 3)) !== "%25") {
        return { ok: false, error: `invalid URL escape ${goQuoteBytes(b.subarray(i, i + 3))}` };
      }
      if (mode === "zone") {
        const v = (hexValue(b[i + 1]!) << 4) | hexValue(b[i + 2]!);
        if (bytesText(b.subarray(i, i + 3)) !== "%25" && v !== 0x20 && shouldEscape(v, "host")) {
          return { ok: false, error: `invalid URL escape ${goQuoteBytes(b.subarray(i, i + 3))}` };
        }
      }
      i += 3;
    } else if (c === 0x2b) {
      hasPlus = mode === "queryComponent";
      i++;
    } else {
      if ((mode === "host" || mode === "zone") && c < 0x80 && shouldEscape(c, mode)) {
        return { ok: false, error: `invalid character ${goQuoteBytes(b.subarray(i, i + 1))} in host name` };
      }
      i++;
    }
  }
  if (n === 0 && !hasPlus) return { ok: true, value: s };
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x25) {
      out.push((hexValue(b[i + 1]!) << 4) | hexValue(b[i + 2]!));
      i += 2;
    } else if (c === 0x2b) out.push(mode === "queryComponent" ? 0x20 : 0x2b);
    else out.push(c);
  }
  return { ok: true, value: bytesText(Uint8Array.from(out)) };
}

/** Go's `strconv.Quote` of a short byte string (ASCII printable kept, others escaped). */
function goQuoteBytes(b: Uint8Array): string {
  let out = '"';
  for (const c of b) {
    if (c === 0x22 || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += `\\x${c.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}

/** Go's `url.escape`. */
function urlEscape(s: string, mode: EscapeMode): string {
  let out = "";
  for (const c of utf8Bytes(s)) {
    if (shouldEscape(c, mode)) {
      if (c === 0x20 && mode === "queryComponent") out += "+";
      else out += `%${HEX_DIGITS[c >> 4]!.toUpperCase()}${HEX_DIGITS[c & 15]!.toUpperCase()}`;
    } else out += String.fromCharCode(c);
  }
  return out;
}

/** Go's `url.QueryEscape`. */
export function queryEscape(s: string): string {
  return urlEscape(s, "queryComponent");
}

/** Go's `url.QueryUnescape`; a builtin error for malformed escapes. */
export function queryUnescape(s: string): string {
  const r = urlUnescape(s, "queryComponent");
  return r.ok ? r.value : fail(r.error);
}

/** Go's `url.ParseQuery`: the values in order of appearance, or the first error. */
export function parseQuery(query: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  let error: string | undefined;
  for (const part of query === "" ? [] : query.split("&")) {
    if (part.includes(";")) {
      error ??= "invalid semicolon separator in query";
      continue;
    }
    if (part === "") continue;
    const eq = part.indexOf("=");
    const rawKey = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? "" : part.slice(eq + 1);
    const key = urlUnescape(rawKey, "queryComponent");
    if (!key.ok) {
      error ??= key.error;
      continue;
    }
    const value = urlUnescape(rawValue, "queryComponent");
    if (!value.ok) {
      error ??= value.error;
      continue;
    }
    const list = m.get(key.value);
    if (list) list.push(value.value);
    else m.set(key.value, [value.value]);
  }
  if (error !== undefined) fail(error);
  return m;
}

const ENCODE_OBJECT_ERROR = "operand 1 values must be string, array[string], or set[string]";

define("urlquery.encode", (args) => str(queryEscape(stringArg(args, 0))));
define("urlquery.decode", (args) => str(queryUnescape(stringArg(args, 0))));
define("urlquery.encode_object", (args) => {
  const obj = objectArg(args, 0);
  // OPA converts the object to JSON first: keys become strings, sets sorted arrays.
  const values = new Map<string, string[]>();
  for (const [k, v] of obj.entries()) {
    const key = k.type === "string" ? k.value : toJSONText(k);
    let list: string[];
    if (v.type === "string") list = [v.value];
    else if (v.type === "array" || v.type === "set") {
      const items = v.type === "array" ? v.items : v.elements();
      list = items.map((x) => (x.type === "string" ? x.value : typeErrorMessage(ENCODE_OBJECT_ERROR)));
    } else return typeErrorMessage(ENCODE_OBJECT_ERROR);
    values.set(key, list);
  }
  const parts: string[] = [];
  for (const key of [...values.keys()].sort(compareStrings)) {
    const escapedKey = queryEscape(key);
    for (const v of values.get(key)!) parts.push(`${escapedKey}=${queryEscape(v)}`);
  }
  return str(parts.join("&"));
});
define("urlquery.decode_object", (args) => {
  const m = parseQuery(stringArg(args, 0));
  return makeObject([...m].map(([k, vs]): [Value, Value] => [str(k), makeArray(vs.map(str))]));
});

function typeErrorMessage(message: string): never {
  throw new BuiltinError("eval_type_error", message);
}

// ------------------------------------------------------------------------------------ uri

/** The parts of a URL as Go's `url.Parse` splits them. */
export interface GoURL {
  scheme: string;
  opaque: string;
  user: string | undefined;
  host: string;
  path: string;
  rawPath: string;
  rawQuery: string;
  fragment: string;
  forceQuery: boolean;
}

class URLError extends Error {}

/** Go's `url.getScheme`. */
function getScheme(rawURL: string): [string, string] {
  for (let i = 0; i < rawURL.length; i++) {
    const c = rawURL[i]!;
    if ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z")) continue;
    if ((c >= "0" && c <= "9") || c === "+" || c === "-" || c === ".") {
      if (i === 0) return ["", rawURL];
      continue;
    }
    if (c === ":") {
      if (i === 0) throw new URLError("missing protocol scheme");
      return [rawURL.slice(0, i), rawURL.slice(i + 1)];
    }
    // An invalid character: no valid scheme, the whole string is a path.
    return ["", rawURL];
  }
  return ["", rawURL];
}

function unescapeOrThrow(s: string, mode: EscapeMode): string {
  const r = urlUnescape(s, mode);
  if (!r.ok) throw new URLError(r.error);
  return r.value;
}

/** Go's `validOptionalPort`. */
function validOptionalPort(port: string): boolean {
  if (port === "") return true;
  if (port[0] !== ":") return false;
  return /^[0-9]*$/.test(port.slice(1));
}

/** Go's `url.parseHost`. */
function parseHost(host: string): string {
  if (host.startsWith("[")) {
    const i = host.lastIndexOf("]");
    if (i < 0) throw new URLError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort))
      throw new URLError(`invalid port ${goQuoteBytes(utf8Bytes(colonPort))} after host`);
    // Go 1.24+: the bracketed part must be an IPv6 address (or IPv6 with zone).
    const zone = host.slice(0, i).indexOf("%25");
    if (zone >= 0) {
      const host1 = unescapeOrThrow(host.slice(0, zone), "host");
      const host2 = unescapeOrThrow(host.slice(zone, i), "zone");
      const host3 = unescapeOrThrow(host.slice(i), "host");
      return host1 + host2 + host3;
    }
  } else {
    const i = host.lastIndexOf(":");
    if (i !== -1) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort))
        throw new URLError(`invalid port ${goQuoteBytes(utf8Bytes(colonPort))} after host`);
    }
  }
  return unescapeOrThrow(host, "host");
}

/** Go's `url.parseAuthority`: the user info (validated, kept raw) and the host. */
function parseAuthority(authority: string): { user: string | undefined; host: string } {
  const i = authority.lastIndexOf("@");
  if (i < 0) return { user: undefined, host: parseHost(authority) };
  const host = parseHost(authority.slice(i + 1));
  const userinfo = authority.slice(0, i);
  if (!validUserinfo(userinfo)) throw new URLError("net/url: invalid userinfo");
  const colon = userinfo.indexOf(":");
  if (colon === -1) unescapeOrThrow(userinfo, "userPassword");
  else {
    unescapeOrThrow(userinfo.slice(0, colon), "userPassword");
    unescapeOrThrow(userinfo.slice(colon + 1), "userPassword");
  }
  return { user: userinfo, host };
}

/** Go's `validUserinfo`. */
function validUserinfo(s: string): boolean {
  for (const r of s) {
    if (/^[A-Za-z0-9]$/.test(r)) continue;
    if ("-._:~!$&'()*+,;=%@".includes(r)) continue;
    return false;
  }
  return true;
}

/** Go's `stringContainsCTLByte`. */
function containsCTLByte(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Go's `url.setPath`: the decoded path, and the raw form only when it is not the default encoding. */
function setPath(u: GoURL, p: string): void {
  u.path = unescapeOrThrow(p, "path");
  u.rawPath = urlEscape(u.path, "path") === p ? "" : p;
}

/** Go's `url.parse(rawURL, viaRequest=false)`. */
function parseURLReference(rawURL: string): GoURL {
  if (containsCTLByte(rawURL)) throw new URLError("net/url: invalid control character in URL");
  const u: GoURL = {
    scheme: "",
    opaque: "",
    user: undefined,
    host: "",
    path: "",
    rawPath: "",
    rawQuery: "",
    fragment: "",
    forceQuery: false,
  };
  if (rawURL === "") return u;
  let [scheme, rest] = getScheme(rawURL);
  u.scheme = scheme.toLowerCase();
  if (rest.endsWith("?") && (rest.match(/\?/g) ?? []).length === 1) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf("?");
    if (q !== -1) {
      u.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith("/")) {
    if (u.scheme !== "") {
      u.opaque = rest;
      return u;
    }
    const colon = rest.indexOf(":");
    const slash = rest.indexOf("/");
    if (colon !== -1 && (slash === -1 || colon < slash))
      throw new URLError("first path segment in URL cannot contain colon");
  }
  if ((u.scheme !== "" || !rest.startsWith("///")) && rest.startsWith("//")) {
    let authority = rest.slice(2);
    rest = "";
    const slash = authority.indexOf("/");
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const a = parseAuthority(authority);
    u.user = a.user;
    u.host = a.host;
  }
  setPath(u, rest);
  return u;
}

/** Go's `url.Parse`: the URL with its fragment, or throws {@link URLError}. */
export function goURLParse(rawURL: string): GoURL {
  const hash = rawURL.indexOf("#");
  const head = hash === -1 ? rawURL : rawURL.slice(0, hash);
  const frag = hash === -1 ? "" : rawURL.slice(hash + 1);
  let u: GoURL;
  try {
    u = parseURLReference(head);
  } catch (e) {
    if (e instanceof URLError) throw new URLError(`parse ${goQuoteURL(head)}: ${e.message}`);
    throw e;
  }
  if (frag !== "") {
    try {
      u.fragment = unescapeOrThrow(frag, "fragment");
    } catch (e) {
      if (e instanceof URLError) throw new URLError(`parse ${goQuoteURL(rawURL)}: ${e.message}`);
      throw e;
    }
  }
  return u;
}

function goQuoteURL(s: string): string {
  return JSON.stringify(s);
}

/** Go's `URL.Hostname`. */
function hostname(host: string): string {
  const [h] = splitHostPort(host);
  return h;
}

/** Go's `URL.Port`. */
function port(host: string): string {
  return splitHostPort(host)[1];
}

/** Go's `splitHostPort` (the one in net/url). */
function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let p = "";
  const colon = host.lastIndexOf(":");
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    p = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return [host, p];
}

define("uri.parse", (args) => {
  const raw = stringArg(args, 0);
  let u: GoURL;
  try {
    u = goURLParse(raw);
  } catch (e) {
    if (e instanceof URLError) fail(e.message);
    throw e;
  }
  const out = makeObject();
  if (u.scheme !== "") out.set(str("scheme"), str(u.scheme));
  const h = hostname(u.host);
  if (h !== "") out.set(str("hostname"), str(h));
  const p = port(u.host);
  if (p !== "") out.set(str("port"), str(p));
  if (u.path !== "") {
    out.set(str("path"), str(u.path));
    out.set(str("raw_path"), str(u.rawPath === "" ? u.path : u.rawPath));
  }
  if (u.rawQuery !== "") out.set(str("raw_query"), str(u.rawQuery));
  if (u.fragment !== "") out.set(str("fragment"), str(u.fragment));
  return out;
});

define("uri.is_valid", (args) => {
  const v = arg(args, 0);
  if (v.type !== "string" || v.value === "") return makeBoolean(false);
  try {
    goURLParse(v.value);
    return makeBoolean(true);
  } catch (e) {
    if (e instanceof URLError) return makeBoolean(false);
    throw e;
  }
});
