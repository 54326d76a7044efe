// Custom builtins of Aqua's trivy-checks (github.com/aquasecurity/trivy-checks), for running its
// tests with `writ policy test --builtins bench/corpora/trivy-builtins.mjs`. They reproduce the
// Go implementations registered by trivy-checks' pkg/rego (internal/rego/*.go, internal/cidr):
// result.new and isManaged exactly; cidr.* for IPv4 and IPv6; sh.parse_commands and
// sh.has_pipes with a small POSIX shell tokenizer instead of mvdan.cc/sh (simple commands,
// quotes, && || ; | & newlines, line continuations, leading assignments, reserved words);
// squealer.scan_string with a few of squealer's rules (AWS keys, private keys, tokens).
import { isIP } from "node:net";

const S = { type: "string" };
const B = { type: "boolean" };
const N = { type: "number" };
const A = { type: "any" };

// ---------------------------------------------------------------------------------- result.new

const METADATA_KEYS = [
  ["startline", "startline"],
  ["StartLine", "startline"],
  ["endline", "endline"],
  ["EndLine", "endline"],
  ["filepath", "filepath"],
  ["sourceprefix", "sourceprefix"],
  ["Path", "filepath"],
  ["explicit", "explicit"],
  ["managed", "managed"],
  ["fskey", "fskey"],
  ["resource", "resource"],
];

function isObject(x) {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** trivy-checks' NewResultImpl: the cause's location metadata, with its parents. */
function newResult(msg, cause) {
  const metadata = {
    startline: 0,
    endline: 0,
    sourceprefix: "",
    filepath: "",
    explicit: false,
    managed: true,
    fskey: "",
    resource: "",
    parent: null,
  };
  if (msg !== undefined) metadata.msg = msg;
  const input = isObject(cause) && "__defsec_metadata" in cause ? cause.__defsec_metadata : cause;
  if (isObject(input)) {
    for (const [from, to] of METADATA_KEYS) if (from in input) metadata[to] = input[from];
    if ("parent" in input) metadata.parent = newResult(undefined, input.parent);
  }
  return metadata;
}

// ---------------------------------------------------------------------------------------- cidr

function parseIPv4(s) {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  let n = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = (n << 8n) | BigInt(p);
  }
  return { value: n, bits: 32 };
}

function parseIPv6(s) {
  if (isIP(s) !== 6) return undefined;
  let text = s;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = parseIPv4(v4[1]).value;
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(`0x${g || "0"}`);
  return { value: n, bits: 128 };
}

/** Go's net.ParseIP: an IPv4 address is the IPv4-mapped IPv6 address ::ffff:a.b.c.d. */
function parseIP(s) {
  return parseIPv4(s) ?? parseIPv6(s);
}

function parseCIDR(s) {
  const [addr, len, extra] = s.split("/");
  if (extra !== undefined || len === undefined || !/^\d+$/.test(len)) return undefined;
  const ip = parseIP(addr);
  if (!ip || Number(len) > ip.bits) return undefined;
  return { ip, prefix: Number(len) };
}

const PRIVATE = [
  "127.0.0.0/8",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "169.254.0.0/16",
  "::1/128",
  "fe80::/10",
  "fc00::/7",
  "100.64.0.0/10",
].map(parseCIDR);

function contains(block, ip) {
  if (block.ip.bits !== ip.bits) return false;
  const shift = BigInt(ip.bits - block.prefix);
  return block.ip.value >> shift === ip.value >> shift;
}

function isPrivate(ip) {
  return PRIVATE.some((b) => contains(b, ip));
}

const MAX_U64 = 0xffffffffffffffffn;

function countAddresses(cidr) {
  if (cidr === "*" || cidr === "internet" || cidr === "any") return MAX_U64;
  if (!cidr.includes("/")) return parseIP(cidr) ? 1 : 0;
  const c = parseCIDR(cidr);
  if (!c) return 0;
  const power = c.ip.bits - c.prefix;
  return power >= 63 ? MAX_U64 : 1n << BigInt(power);
}

function isPublic(cidr) {
  if (cidr === "*" || cidr === "internet" || cidr === "any") return true;
  if (cidr.includes("-")) {
    const parts = cidr.split("-");
    if (parts.length !== 2) return false;
    // As the Go code does: net.IP(string) is not a parsed address, so it is never private.
    return true;
  }
  if (!cidr.includes("/")) {
    const ip = parseIP(cidr);
    return ip ? !isPrivate(ip) : false;
  }
  const c = parseCIDR(cidr);
  if (!c) return false;
  if (!isPrivate(c.ip)) return true;
  const hostBits = BigInt(c.ip.bits - c.prefix);
  const end = { value: c.ip.value | ((1n << hostBits) - 1n), bits: c.ip.bits };
  return !isPrivate(end);
}

// ------------------------------------------------------------------------------------------ sh

const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "case",
  "esac",
  "{",
  "}",
  "!",
]);

/**
 * The shell words of `text` as mvdan.cc/sh prints them (quotes kept), with the operators between
 * them as separate tokens. Throws on an unterminated quote, as the parser does.
 */
function tokenize(text) {
  const tokens = [];
  let word = "";
  let inWord = false;
  const end = () => {
    if (inWord) tokens.push({ word });
    word = "";
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && text[i + 1] === "\n") {
      i++;
      continue;
    }
    if (c === "\\") {
      word += c + (text[i + 1] ?? "");
      inWord = true;
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close < 0) throw new Error(`reached EOF without closing quote ${c}`);
      word += text.slice(i, close + 1);
      inWord = true;
      i = close;
      continue;
    }
    if (c === "$" && text[i + 1] === "(") {
      let depth = 0;
      let j = i + 1;
      for (; j < text.length; j++) {
        if (text[j] === "(") depth++;
        else if (text[j] === ")" && --depth === 0) break;
      }
      word += text.slice(i, j + 1);
      inWord = true;
      i = j;
      continue;
    }
    if (c === "#" && !inWord) {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl - 1;
      continue;
    }
    if (c === " " || c === "\t") {
      end();
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === "&&" || two === "||" || two === ";;") {
      end();
      tokens.push({ op: two });
      i++;
      continue;
    }
    if (c === ";" || c === "|" || c === "&" || c === "\n" || c === "(" || c === ")") {
      end();
      tokens.push({ op: c });
      continue;
    }
    word += c;
    inWord = true;
  }
  end();
  return tokens;
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function parseCommands(text) {
  const commands = [];
  let current = [];
  let skipFor = false;
  const flush = () => {
    if (current.length > 0) commands.push(current);
    current = [];
  };
  for (const t of tokenize(text)) {
    if (t.op !== undefined) {
      skipFor = false;
      flush();
      continue;
    }
    if (skipFor) continue;
    if (current.length === 0) {
      if (t.word === "for") {
        skipFor = true;
        continue;
      }
      if (RESERVED.has(t.word) || ASSIGNMENT.test(t.word)) continue;
    }
    current.push(t.word);
  }
  flush();
  return commands;
}

function hasPipes(text) {
  return tokenize(text).some((t) => t.op === "|");
}

// ------------------------------------------------------------------------------------ squealer

const SECRET_RULES = [
  ["AWS Access Key ID", /\b(A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\b/],
  ["AWS Secret Key", /aws.{0,20}?(secret|private)?.{0,20}?['"][0-9a-zA-Z/+]{40}['"]/i],
  ["Private Key", /-----BEGIN ((RSA|DSA|EC|OPENSSH|PGP) )?PRIVATE KEY( BLOCK)?-----/],
  ["Github Token", /\b(ghp|gho|ghu|ghs|ghr)_[0-9a-zA-Z]{36}\b/],
  ["Slack Token", /xox[baprs]-([0-9a-zA-Z]{10,48})/],
  [
    "Slack Webhook",
    /https:\/\/hooks\.slack\.com\/services\/T[a-zA-Z0-9_]{8}\/B[a-zA-Z0-9_]{8,12}\/[a-zA-Z0-9_]{24}/,
  ],
  ["Google API Key", /AIza[0-9A-Za-z\\-_]{35}/],
  ["Stripe Key", /(sk|rk)_live_[0-9a-zA-Z]{24}/],
];

function scanString(text) {
  for (const [description, pattern] of SECRET_RULES) {
    if (pattern.test(text)) return { transgressionFound: true, description };
  }
  return { transgressionFound: false, description: "" };
}

// -------------------------------------------------------------------------------------- export

export const builtins = [
  { name: "result.new", decl: { type: "function", args: [S, A], result: A }, impl: newResult },
  {
    name: "isManaged",
    decl: { type: "function", args: [A], result: B },
    impl: (r) => newResult("", r).managed,
  },
  {
    name: "sh.parse_commands",
    decl: { type: "function", args: [S], result: { type: "array", dynamic: { type: "array", dynamic: S } } },
    impl: (s) => {
      if (typeof s !== "string") throw new Error("invalid parameter type: operand 1 must be string");
      try {
        return parseCommands(s);
      } catch (error) {
        throw new Error(`parse command sequence error: ${error.message}`);
      }
    },
  },
  {
    name: "sh.has_pipes",
    decl: { type: "function", args: [S], result: B },
    impl: (s) => {
      try {
        return hasPipes(s);
      } catch (error) {
        throw new Error(`parse pipe error: ${error.message}`);
      }
    },
  },
  { name: "cidr.count_addresses", decl: { type: "function", args: [S], result: N }, impl: countAddresses },
  { name: "cidr.is_public", decl: { type: "function", args: [S], result: B }, impl: isPublic },
  {
    name: "squealer.scan_string",
    decl: {
      type: "function",
      args: [S],
      result: {
        type: "object",
        static: [
          { key: "transgressionFound", value: B },
          { key: "description", value: S },
        ],
      },
    },
    impl: scanString,
  },
];
