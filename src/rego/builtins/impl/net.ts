/**
 * The `net.cidr_*` builtins, following OPA's `v1/topdown/cidr.go` and Go's `net` package: IPv4
 * and IPv6 parsing (`netip` rules: no leading zeros in IPv4 fields, no zones), IPv4-mapped IPv6
 * addresses, masks of 4 or 16 bytes, and the text forms of `net.IP` and `net.IPNet`.
 * `net.cidr_merge` ports OPA's `internal/cidr/merge` (from Cilium), quirks included.
 */
import { makeArray, makeBoolean, makeSet, type SetValue, type Value } from "../../plan/value.ts";
import { arg, define, fail, int, str, stringArg, typeError } from "../registry.ts";

/** An IP address or mask: 4 or 16 bytes, as Go's `net.IP`/`net.IPMask`. */
type Bytes = number[];

interface IPNet {
  ip: Bytes;
  mask: Bytes;
}

const V4_IN_V6_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

// ------------------------------------------------------------------------------------ parsing

/** `netip` IPv4 parsing: four decimal fields, no leading zeros. */
function parseIPv4(s: string): Bytes | undefined {
  const fields = s.split(".");
  if (fields.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const f of fields) {
    if (!/^\d{1,3}$/.test(f) || (f.length > 1 && f[0] === "0")) return undefined;
    const n = Number(f);
    if (n > 255) return undefined;
    bytes.push(n);
  }
  return bytes;
}

function parseIPv6Groups(s: string, last: boolean): number[] | undefined {
  if (s === "") return [];
  const parts = s.split(":");
  const bytes: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] ?? "";
    if (last && i === parts.length - 1 && p.includes(".")) {
      const v4 = parseIPv4(p);
      if (!v4) return undefined;
      bytes.push(...v4);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) {
      const n = Number.parseInt(p, 16);
      bytes.push(n >> 8, n & 0xff);
    } else return undefined;
  }
  return bytes;
}

/** `netip` IPv6 parsing: hex groups, at most one `::`, an optional trailing dotted IPv4; no zone. */
function parseIPv6(s: string): Bytes | undefined {
  const ellipsis = s.indexOf("::");
  if (ellipsis >= 0 && s.indexOf("::", ellipsis + 1) >= 0) return undefined;
  if (ellipsis < 0) {
    const bytes = parseIPv6Groups(s, true);
    return bytes?.length === 16 ? bytes : undefined;
  }
  const head = parseIPv6Groups(s.slice(0, ellipsis), false);
  const tail = parseIPv6Groups(s.slice(ellipsis + 2), true);
  if (!head || !tail || head.length + tail.length > 14) return undefined;
  return [...head, ...new Array<number>(16 - head.length - tail.length).fill(0), ...tail];
}

/** `netip.ParseAddr`: the address as 16 bytes, and whether it was written as IPv4. */
function parseAddr(s: string): { ip: Bytes; is4: boolean } | undefined {
  if (s.includes(":")) {
    const ip = parseIPv6(s);
    return ip && { ip, is4: false };
  }
  const v4 = parseIPv4(s);
  return v4 && { ip: [...V4_IN_V6_PREFIX, ...v4], is4: true };
}

/** Go's `net.ParseIP` (16 bytes). */
function parseIP(s: string): Bytes | undefined {
  return parseAddr(s)?.ip;
}

/** Go's `net.CIDRMask(ones, bits)`. */
function cidrMask(ones: number, bits: number): Bytes {
  return Array.from({ length: bits / 8 }, (_, i) => {
    const n = Math.min(8, Math.max(0, ones - i * 8));
    return (0xff << (8 - n)) & 0xff;
  });
}

/** Go's `net.ParseCIDR`: the address (16 bytes) and the network (masked address, 4-byte mask for IPv4). */
function parseCIDR(s: string): { ip: Bytes; net: IPNet } | undefined {
  const slash = s.indexOf("/");
  if (slash < 0) return undefined;
  const addr = parseAddr(s.slice(0, slash));
  const bitsText = s.slice(slash + 1);
  if (!addr || !/^\d+$/.test(bitsText)) return undefined;
  const ones = bitsText.length > 8 ? Number.POSITIVE_INFINITY : Number(bitsText);
  const bits = addr.is4 ? 32 : 128;
  if (ones > bits) return undefined;
  const mask = cidrMask(ones, bits);
  const ip = ipMask(addr.ip, mask);
  if (!ip) return undefined;
  return { ip: addr.ip, net: { ip, mask } };
}

function invalidCIDR(s: string): never {
  return fail(`invalid CIDR address: ${s}`);
}

/** OPA's `getNetFromOperand`. */
function netOperand(v: Value): IPNet {
  if (v.type !== "string") return typeError(1, v, "string");
  return parseCIDR(v.value)?.net ?? invalidCIDR(v.value);
}

// ------------------------------------------------------------------------------------ net.IP

function isV4Mapped(ip: Bytes): boolean {
  return ip.length === 16 && V4_IN_V6_PREFIX.every((b, i) => ip[i] === b);
}

/** Go's `IP.To4`. */
function to4(ip: Bytes): Bytes | undefined {
  if (ip.length === 4) return ip;
  return isV4Mapped(ip) ? ip.slice(12) : undefined;
}

/** Go's `IP.Mask`. */
function ipMask(ip: Bytes, mask: Bytes): Bytes | undefined {
  let m = mask;
  let x = ip;
  if (m.length === 16 && x.length === 4 && m.slice(0, 12).every((b) => b === 0xff)) m = m.slice(12);
  if (m.length === 4 && x.length === 16 && isV4Mapped(x)) x = x.slice(12);
  if (x.length !== m.length) return undefined;
  return x.map((b, i) => b & (m[i] ?? 0));
}

/** Go's `networkNumberAndMask`. */
function networkNumberAndMask(n: IPNet): { ip: Bytes; mask: Bytes } | undefined {
  let ip = to4(n.ip);
  if (!ip) {
    ip = n.ip;
    if (ip.length !== 16) return undefined;
  }
  let mask = n.mask;
  if (mask.length === 4) {
    if (ip.length !== 4) return undefined;
  } else if (mask.length === 16) {
    if (ip.length === 4) mask = mask.slice(12);
  } else return undefined;
  return { ip, mask };
}

/** Go's `IPNet.Contains`. */
function contains(n: IPNet, ip: Bytes): boolean {
  const nm = networkNumberAndMask(n);
  if (!nm) return false;
  const x = to4(ip) ?? ip;
  if (x.length !== nm.ip.length) return false;
  return x.every((b, i) => ((nm.ip[i] ?? 0) & (nm.mask[i] ?? 0)) === (b & (nm.mask[i] ?? 0)));
}

/** Go's `IPMask.Size`: ones and bits, or [0, 0] for a non-canonical mask. */
function maskSize(mask: Bytes): [number, number] {
  let ones = 0;
  let i = 0;
  for (; i < mask.length && mask[i] === 0xff; i++) ones += 8;
  if (i < mask.length) {
    let b = mask[i] ?? 0;
    while (b & 0x80) {
      ones++;
      b = (b << 1) & 0xff;
    }
    if (b !== 0) return [0, 0];
    for (i++; i < mask.length; i++) if (mask[i] !== 0) return [0, 0];
  }
  return [ones, mask.length * 8];
}

function hex(bytes: Bytes): string {
  return bytes.map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Go's `IP.String` (RFC 5952 for IPv6, dotted for IPv4 and IPv4-mapped). */
function ipString(ip: Bytes): string {
  if (ip.length === 0) return "<nil>";
  if (ip.length !== 4 && ip.length !== 16) return `?${hex(ip)}`;
  const v4 = to4(ip);
  if (v4) return v4.join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((ip[2 * i] ?? 0) << 8) | (ip[2 * i + 1] ?? 0));
  let zeroStart = -1;
  let zeroLen = 0;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > zeroLen) {
      zeroStart = i;
      zeroLen = j - i;
    }
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === zeroStart) {
      out += "::";
      i += zeroLen;
      if (i >= 8) break;
    } else if (i > 0) out += ":";
    out += (groups[i] ?? 0).toString(16);
  }
  return out;
}

/** Go's `IPNet.String`. */
function netString(n: IPNet): string {
  const nm = networkNumberAndMask(n);
  if (!nm) return "<nil>";
  const [ones, bits] = maskSize(nm.mask);
  if (ones === 0 && bits === 0) return `${ipString(nm.ip)}/${hex(nm.mask)}`;
  return `${ipString(nm.ip)}/${ones}`;
}

function bytesToBigInt(b: Bytes): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

/** The low `len` bytes of `n` (Go's `big.Int.Bytes` padded to `len`). */
function bigIntToBytes(n: bigint, len: number): Bytes {
  const out = new Array<number>(len).fill(0);
  let x = n;
  for (let i = len - 1; i >= 0 && x > 0n; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

function compareBytes(a: Bytes, b: Bytes): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return Math.sign(a.length - b.length);
}

/** Go's `IP.Equal`. */
function ipEqual(a: Bytes, b: Bytes): boolean {
  const x = to4(a) ?? a;
  const y = to4(b) ?? b;
  return x.length === y.length && compareBytes(x, y) === 0;
}

// ------------------------------------------------------------------------------------ builtins

/** OPA's `getLastIP`. */
function lastIP(n: IPNet): Bytes {
  const [ones, bits] = maskSize(n.mask);
  if (ones === 0 && bits === 0) fail("CIDR mask is in non-standard format");
  if (ones === bits) return n.ip;
  const last = bytesToBigInt(n.ip) | ((1n << BigInt(bits - ones)) - 1n);
  return bigIntToBytes(last, bits / 8);
}

/** OPA's `builtinNetCIDRContains` (also `net.cidr_overlap`). */
function cidrContains(a: Value, b: Value): boolean {
  const net = netOperand(a);
  if (b.type !== "string") return typeError(1, b, "string");
  const ip = parseIP(b.value);
  if (ip) return contains(net, ip);
  const inner = parseCIDR(b.value)?.net;
  if (!inner) fail(`not a valid textual representation of an IP address or CIDR: ${b.value}`);
  return contains(net, inner.ip) && contains(net, lastIP(inner));
}

define("net.cidr_contains", (args) => makeBoolean(cidrContains(arg(args, 0), arg(args, 1))));
define("net.cidr_overlap", (args) => makeBoolean(cidrContains(arg(args, 0), arg(args, 1))));

define("net.cidr_intersects", (args) => {
  const a = netOperand(arg(args, 0));
  const b = netOperand(arg(args, 1));
  return makeBoolean(contains(a, b.ip) || contains(b, a.ip));
});

define("net.cidr_is_valid", (args) => {
  const v = arg(args, 0);
  return makeBoolean(v.type === "string" && parseCIDR(v.value) !== undefined);
});

/** The CIDR of an element of `net.cidr_contains_matches`: a string, or the first item of an array. */
function matchTerm(operand: number, v: Value): Value {
  if (v.type === "string") return v;
  if (v.type === "array" && v.items.length > 0) return v.items[0] ?? v;
  return fail(`operand ${operand}: element must be string or non-empty array`);
}

/**
 * The (cidr, key) pairs of an operand, lazily as OPA iterates them (so errors surface in the
 * same order): a string is its own key; arrays give indices, objects keys, sets elements.
 */
function* matchOperand(operand: number, v: Value): Generator<[Value, Value]> {
  switch (v.type) {
    case "string":
      yield [v, v];
      return;
    case "array":
      for (let i = 0; i < v.items.length; i++) {
        const x = v.items[i];
        if (x !== undefined) yield [matchTerm(operand, x), int(i)];
      }
      return;
    case "set":
      for (const x of v.elements()) yield [matchTerm(operand, x), x];
      return;
    case "object":
      for (const [k, x] of v.entries()) yield [matchTerm(operand, x), k];
      return;
  }
}

define("net.cidr_contains_matches", (args) => {
  const result = makeSet();
  for (const [cidrA, keyA] of matchOperand(1, arg(args, 0))) {
    for (const [cidrB, keyB] of matchOperand(2, arg(args, 1))) {
      if (cidrContains(cidrA, cidrB)) result.add(makeArray([keyA, keyB]));
    }
  }
  return result;
});

/** Adds one to an address in place (Go's `incIP`, wrapping). */
function incIP(ip: Bytes): void {
  for (let j = ip.length - 1; j >= 0; j--) {
    ip[j] = ((ip[j] ?? 0) + 1) & 0xff;
    if (ip[j] !== 0) break;
  }
}

/**
 * The most addresses `net.cidr_expand` produces (a /16 of IPv4). OPA has no limit and relies on
 * cancelling the query; an evaluation inside Writ's Wasm module cannot be cancelled, so a range
 * such as 0.0.0.0/0 is an error here instead of a gateway that stops answering.
 */
export const CIDR_EXPAND_LIMIT = 65_536;

define("net.cidr_expand", (args) => {
  const s = stringArg(args, 0);
  const parsed = parseCIDR(s) ?? invalidCIDR(s);
  const [ones, bits] = maskSize(parsed.net.mask);
  if (bits - ones > 16)
    fail(`${s} holds 2^${bits - ones} addresses, more than the ${CIDR_EXPAND_LIMIT} Writ expands`);
  const result = makeSet();
  const start = ipMask(parsed.ip, parsed.net.mask) ?? [];
  const ip = [...start];
  while (contains(parsed.net, ip)) {
    result.add(str(ipString(ip)));
    incIP(ip);
    if (compareBytes(ip, start) === 0) break; // wrapped around the whole address space
  }
  return result;
});

// ------------------------------------------------------------------------------------ net.cidr_merge

const DEFAULT_IPV4 = [...V4_IN_V6_PREFIX, 0, 0, 0, 0];
const DEFAULT_IPV6 = new Array<number>(16).fill(0);
const UPPER_IPV4 = [...V4_IN_V6_PREFIX, 255, 255, 255, 255];
const UPPER_IPV6 = new Array<number>(16).fill(255);

/** `merge.GetAddressRange`: first and last address, 16 bytes each. */
function addressRange(n: IPNet): [Bytes, Bytes] {
  let first = ipMask(n.ip, n.mask) ?? [];
  let last = [...first];
  if (to4(first)) {
    first = [...V4_IN_V6_PREFIX, ...(to4(first) ?? [])];
    last = [...first];
  }
  if (last.length < 16) last = [...new Array<number>(16 - last.length).fill(0), ...last];
  for (let i = 0; i < n.mask.length; i++) {
    const inv = ~(n.mask[n.mask.length - i - 1] ?? 0) & 0xff;
    last[15 - i] = (last[15 - i] ?? 0) | inv;
  }
  return [first, last];
}

/** `merge.GetPreviousIP`. */
function previousIP(ip: Bytes): Bytes {
  if (ipEqual(ip, DEFAULT_IPV4) || ipEqual(ip, DEFAULT_IPV6)) return ip;
  const prev = [...ip];
  const lower = to4(ip) ? ip.length - 4 : 0;
  let overflow = false;
  for (let i = ip.length - 1; i >= lower; i--) {
    if (overflow || i === ip.length - 1) prev[i] = ((prev[i] ?? 0) - 1) & 0xff;
    overflow = ip[i] === 0 && prev[i] === 255;
  }
  return prev;
}

/** `merge.getNextIP`. */
function nextIP(ip: Bytes): Bytes {
  if (ipEqual(ip, UPPER_IPV4) || ipEqual(ip, UPPER_IPV6)) return ip;
  if (ip.length === 4) return bigIntToBytes((bytesToBigInt(ip) + 1n) & 0xffffffffn, 4);
  if (ip.length === 16) return bigIntToBytes((bytesToBigInt(ip) + 1n) & ((1n << 128n) - 1n), 16);
  return ip;
}

/** A 16-byte address from an integer (IPv4 in its mapped form keeps the `ffff` prefix bits). */
function addrBytes(n: bigint): Bytes {
  return bigIntToBytes(n, 16);
}

/** `merge.createSpanningCIDR`. */
function spanningCIDR(first: Bytes, last: Bytes): IPNet {
  const isV4 = to4(first) !== undefined;
  const bitLen = isV4 ? 32 : 128;
  let size = bitLen;
  const lowest = bytesToBigInt(first);
  let highest = bytesToBigInt(last);
  while (size > 0 && lowest < highest) {
    size--;
    highest &= -(1n << BigInt(bitLen - size));
  }
  return { ip: addrBytes(highest), mask: cidrMask(size, bitLen) };
}

/** `merge.partitionCIDR`: the networks left and right of `exclude` within `target`. */
function partitionCIDR(target: IPNet, exclude: IPNet): [IPNet[], IPNet[]] {
  const targetIsV4 = to4(target.ip) !== undefined;
  const [targetFirst, targetLast] = addressRange(target);
  const [excludeFirst, excludeLast] = addressRange(exclude);
  const [targetSize] = maskSize(target.mask);
  const [excludeSize] = maskSize(exclude.mask);
  if (compareBytes(excludeLast, targetFirst) < 0) return [[], [target]];
  if (compareBytes(targetLast, excludeFirst) < 0) return [[target], []];
  if (targetSize >= excludeSize) return [[], []];
  const left: IPNet[] = [];
  const right: IPNet[] = [];
  const bitLen = targetIsV4 ? 32 : 128;
  let prefix = targetSize + 1;
  let lower = bytesToBigInt(targetFirst);
  let upper = lower + (1n << BigInt(bitLen - prefix));
  let matched = 0n;
  while (excludeSize >= prefix) {
    const upperBytes = addrBytes(upper);
    if (compareBytes(excludeFirst, upperBytes) >= 0) {
      left.push({ ip: addrBytes(lower), mask: cidrMask(prefix, bitLen) });
      matched = upper;
    } else {
      right.push({ ip: upperBytes, mask: cidrMask(prefix, bitLen) });
      matched = lower;
    }
    prefix++;
    if (prefix > bitLen) break;
    lower = matched;
    upper = matched + (1n << BigInt(bitLen - prefix));
  }
  return [left, right];
}

/** `merge.RangeToCIDRs`. */
function rangeToCIDRs(first: Bytes, last: Bytes): IPNet[] {
  let spanning = spanningCIDR(first, last);
  const [spanFirst, spanLast] = addressRange(spanning);
  let list: IPNet[] = [];
  if (compareBytes(spanFirst, first) < 0) {
    const prev = previousIP(first);
    const bitLen = to4(prev) ? 32 : 128;
    const [, right] = partitionCIDR(spanning, { ip: prev, mask: cidrMask(bitLen, bitLen) });
    const [head, ...rest] = right;
    if (head) spanning = head;
    list = rest;
  }
  if (compareBytes(spanLast, last) > 0) {
    const next = nextIP(last);
    const bitLen = to4(next) ? 32 : 128;
    const [left] = partitionCIDR(spanning, { ip: next, mask: cidrMask(bitLen, bitLen) });
    list.push(...left);
  } else list.push(spanning);
  return list;
}

interface BlockRange {
  first: Bytes;
  last: Bytes;
  network: IPNet | undefined;
}

/** OPA's `generateIPNet`: an IPv4 address gets its classful default mask. */
function generateIPNet(v: Value): IPNet {
  if (v.type !== "string") return fail("element must be string");
  const ip = parseIP(v.value);
  if (!ip) return parseCIDR(v.value)?.net ?? invalidCIDR(v.value);
  const v4 = to4(ip);
  if (!v4) return fail("IPv6 invalid: needs prefix length");
  const first = v4[0] ?? 0;
  return { ip, mask: cidrMask(first < 0x80 ? 8 : first < 0xc0 ? 16 : 24, 32) };
}

function mergeRanges(input: BlockRange[]): BlockRange[] {
  const ranges = [...input].sort((a, b) => compareBytes(a.last, b.last) || compareBytes(a.first, b.first));
  for (let i = ranges.length - 1; i > 0; i--) {
    const cur = ranges[i];
    const prevRange = ranges[i - 1];
    if (!cur || !prevRange) continue;
    if (compareBytes(previousIP(cur.first), prevRange.last) <= 0) {
      const first = compareBytes(prevRange.first, cur.first) < 0 ? prevRange.first : cur.first;
      ranges[i - 1] = { first: [...first], last: [...cur.last], network: undefined };
      ranges.splice(i, 1);
    }
  }
  return ranges;
}

define("net.cidr_merge", (args) => {
  const v = arg(args, 0);
  if (v.type !== "array" && v.type !== "set") return fail("operand must be an array");
  const items = v.type === "array" ? v.items : v.elements();
  const networks = items.map(generateIPNet);
  const result: SetValue = makeSet();
  if (networks.length === 0) return result;
  const ranges = networks.map((network): BlockRange => {
    const [first, last] = addressRange(network);
    return { first, last, network };
  });
  for (const r of mergeRanges(ranges)) {
    const nets = r.network ? [r.network] : rangeToCIDRs(r.first, r.last);
    for (const n of nets) result.add(str(netString(n)));
  }
  return result;
});
