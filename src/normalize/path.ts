/**
 * One path argument in normal form, confined to its root (src/contracts/paths.ts declares it).
 * Purely lexical, with node:path/posix: the file system is never read, so a symlink inside the
 * root that points out of it is the backend's to refuse.
 *
 * In order: control characters and backslashes are refused; percent-encodings are decoded once
 * (an encoded `/`, an invalid encoding, or a `%` left after decoding — `%252e` — is refused);
 * Unicode NFC; a relative path is resolved against the root; `.` and `..` segments, repeated and
 * trailing slashes are resolved away (a `..` above `/` is refused, not dropped); a result outside
 * the root is refused. The normal form is a
 * fixed point: normalizing it again gives it back.
 */
import path from "node:path/posix";
import type { PathDeclaration } from "../contracts/paths.ts";

/** Why a path is refused. */
export type PathRefusalCode =
  | "empty"
  | "control_character"
  | "backslash"
  | "bad_encoding"
  | "encoded_separator"
  | "double_encoding"
  | "outside_root";

export type PathResult = { ok: true; path: string } | { ok: false; code: PathRefusalCode; message: string };

/** C0 and C1 control characters and DEL (Unicode category Cc), NUL among them. */
const control = /\p{Cc}/u;
/** A `%` that does not start a percent-encoding. */
const looseEscape = /%(?![0-9A-Fa-f]{2})/;
/** `/` percent-encoded: a separator that would appear only after decoding. */
const encodedSlash = /%2f/i;

function refuse(code: PathRefusalCode, message: string): PathResult {
  return { ok: false, code, message };
}

/** What a path may not hold, before and after percent-decoding; undefined when it is clean. */
function forbidden(value: string, stage: string): PathResult | undefined {
  if (control.test(value)) return refuse("control_character", `holds a control character${stage}`);
  if (value.includes("\\")) {
    return refuse("backslash", `holds a backslash${stage}: paths separate their parts with / only`);
  }
  return undefined;
}

function decodeOnce(value: string): PathResult {
  if (!value.includes("%")) return { ok: true, path: value };
  if (looseEscape.test(value)) {
    return refuse("bad_encoding", "holds a % that does not start a percent-encoding such as %20");
  }
  if (encodedSlash.test(value)) {
    return refuse("encoded_separator", "holds an encoded / (%2F): write separators as /");
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return refuse("bad_encoding", "holds percent-encodings that are not UTF-8");
  }
  if (decoded.includes("%")) {
    return refuse("double_encoding", "still holds a % after percent-decoding once (e.g. %252e): encode once");
  }
  return { ok: true, path: decoded };
}

/** Whether `candidate` (absolute, normal) is `root` or below it. */
function isWithin(candidate: string, root: string): boolean {
  return candidate === root || candidate.startsWith(root === "/" ? "/" : `${root}/`);
}

/**
 * `value` joined onto `root` (when relative) with `.`, `..` and empty segments resolved; undefined
 * when a `..` climbs above `/`, which node:path would silently swallow (`/../x` is `/x` there):
 * under the root `/`, `../x` is an escape attempt, not `x`.
 */
function resolveUnder(root: string, value: string): string | undefined {
  const parts: string[] = [];
  for (const part of (value.startsWith("/") ? value : `${root}/${value}`).split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") parts.push(part);
    else if (parts.pop() === undefined) return undefined;
  }
  return `/${parts.join("/")}`;
}

/** `raw` in normal form under `declaration`, or why it is refused. */
export function normalizePath(raw: string, declaration: PathDeclaration): PathResult {
  if (raw === "") return refuse("empty", "is empty: name a file or folder (. is the root)");
  const plain = forbidden(raw, "");
  if (plain !== undefined) return plain;
  const decoded = decodeOnce(raw);
  if (!decoded.ok) return decoded;
  const hidden = forbidden(decoded.path, " once percent-decoded");
  if (hidden !== undefined) return hidden;
  const { root, relative } = declaration;
  const resolved = resolveUnder(root, decoded.path.normalize("NFC"));
  if (resolved === undefined) return refuse("outside_root", `climbs out of ${root} with ..`);
  if (!isWithin(resolved, root)) {
    return refuse("outside_root", `resolves to ${resolved}, outside ${root}`);
  }
  return { ok: true, path: relative ? path.relative(root, resolved) || "." : resolved };
}
