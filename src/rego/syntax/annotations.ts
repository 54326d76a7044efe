/**
 * `# METADATA` annotations, as OPA's parser reads them (`v1/ast/parser.go`, `annotations.go`):
 *
 * - A block starts with a comment at column 1 whose text (trimmed) starts with `METADATA`, and
 *   takes the comments on the following lines, each at column 1, up to the next gap or the next
 *   `METADATA` comment. Each line loses one leading space; the lines are YAML.
 * - The block applies to the first statement (package, import or rule) on a later line. Its
 *   scope defaults to `rule` before a rule (`document` when `entrypoint: true`) and `package`
 *   before a package; `rule`/`document` must precede a rule and `package`/`subpackages` a package.
 *
 * Malformed blocks are `rego_parse_error`s located at the `# METADATA` comment (YAML syntax
 * errors at the offending line, as OPA maps them).
 */
import YAML from "yaml";
import { type Location, RegoError } from "../errors.ts";
import type { Annotation, AnnotationTarget, Comment, JSONValue } from "./ast.ts";

/** A statement an annotation may attach to, in source order. */
export interface AnnotatableStatement {
  target: AnnotationTarget | undefined;
  loc: Location;
}

interface Block {
  loc: Location;
  lines: Comment[];
}

function isMetadataComment(comment: Comment): boolean {
  return comment.loc.col === 1 && comment.text.trim().startsWith("METADATA");
}

function blocksOf(comments: readonly Comment[]): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < comments.length; i++) {
    const start = comments[i]!;
    if (!isMetadataComment(start)) continue;
    const lines: Comment[] = [];
    let previous = start;
    while (i + 1 < comments.length) {
      const next = comments[i + 1]!;
      if (next.loc.col !== 1 || next.loc.line - 1 !== previous.loc.line || isMetadataComment(next)) break;
      lines.push(next);
      previous = next;
      i++;
    }
    blocks.push({ loc: start.loc, lines });
  }
  return blocks;
}

/** Parses the annotation blocks of a module and attaches them to its statements. */
export function parseAnnotations(
  comments: readonly Comment[],
  statements: readonly AnnotatableStatement[],
): { annotations: Annotation[]; errors: RegoError[] } {
  const annotations: Annotation[] = [];
  const errors: RegoError[] = [];
  for (const block of blocksOf(comments)) {
    const parsed = parseBlock(block);
    if (parsed instanceof RegoError) {
      errors.push(parsed);
      continue;
    }
    const statement = statements.find((s) => s.loc.line > block.loc.line);
    const target = statement?.target;
    if (parsed.scope === "") {
      if (target?.kind === "rule") parsed.scope = parsed.entrypoint ? "document" : "rule";
      else if (target?.kind === "package") parsed.scope = "package";
      else if (target?.kind === "import") parsed.scope = "import";
    }
    const problem = attachmentProblem(parsed.scope, target, parsed.entrypoint === true);
    if (problem !== undefined) {
      errors.push(new RegoError("rego_parse_error", problem, block.loc));
      continue;
    }
    annotations.push({ ...parsed, target });
  }
  return { annotations, errors };
}

function attachmentProblem(
  scope: string,
  target: AnnotationTarget | undefined,
  entrypoint: boolean,
): string | undefined {
  const found = target?.kind ?? "nil";
  if (scope === "rule" || scope === "document") {
    if (target?.kind !== "rule")
      return `annotation scope '${scope}' must be applied to rule (found ${found})`;
  } else if (scope === "package" || scope === "subpackages") {
    if (target?.kind !== "package")
      return `annotation scope '${scope}' must be applied to package (found ${found})`;
  } else {
    return `invalid annotation scope '${scope}'. Use one of 'rule', 'document', 'package', or 'subpackages'`;
  }
  if (entrypoint && scope !== "document" && scope !== "package") {
    return `annotation entrypoint applied to non-document or package scope '${scope}'`;
  }
  return undefined;
}

type ParsedBlock = Omit<Annotation, "target" | "scope"> & { scope: string };

function parseBlock(block: Block): ParsedBlock | RegoError {
  const text = block.lines.map((c) => `${c.text.startsWith(" ") ? c.text.slice(1) : c.text}\n`).join("");
  const fail = (message: string, loc: Location = block.loc) =>
    new RegoError("rego_parse_error", message, loc);
  if (text.trim() === "") return fail("expected METADATA block, found whitespace");
  let raw: unknown;
  try {
    raw = YAML.parse(text, { uniqueKeys: true });
  } catch (error) {
    if (!(error instanceof YAML.YAMLError)) throw error;
    const line = error.linePos?.[0]?.line ?? 1;
    const comment = block.lines[Math.min(line, block.lines.length - 1)];
    const reason = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    return fail(`yaml: line ${line}: ${reason}`, comment?.loc ?? block.loc);
  }
  if (raw === null || raw === undefined) raw = {};
  if (!isRecord(raw))
    return fail(`yaml: unmarshal errors:\n  line 1: cannot unmarshal ${yamlTag(raw)} into ast.rawAnnotation`);
  try {
    return readAnnotation(raw, block.loc);
  } catch (error) {
    if (error instanceof AnnotationError) return fail(error.message);
    throw error;
  }
}

class AnnotationError extends Error {}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function yamlTag(x: unknown): string {
  if (typeof x === "string") return `!!str \`${x}\``;
  if (typeof x === "number") return `!!${Number.isInteger(x) ? "int" : "float"} \`${x}\``;
  if (typeof x === "boolean") return `!!bool \`${x}\``;
  if (Array.isArray(x)) return "!!seq";
  if (x === null) return "!!null";
  return "!!map";
}

function unmarshalError(value: unknown, into: string): never {
  throw new AnnotationError(`yaml: unmarshal errors:\n  cannot unmarshal ${yamlTag(value)} into ${into}`);
}

function optionalString(raw: Record<string, unknown>, key: string): string | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "object") unmarshalError(value, "string");
  return String(value);
}

function optionalList(raw: Record<string, unknown>, key: string): unknown[] | undefined {
  const value = raw[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) unmarshalError(value, "[]interface {}");
  return value;
}

function readAnnotation(raw: Record<string, unknown>, loc: Location): ParsedBlock {
  const result: ParsedBlock = { scope: optionalString(raw, "scope") ?? "", loc };
  const title = optionalString(raw, "title");
  if (title) result.title = title;
  const description = optionalString(raw, "description");
  if (description) result.description = description;
  const entrypoint = raw.entrypoint;
  if (entrypoint !== undefined && entrypoint !== null) {
    if (typeof entrypoint !== "boolean") unmarshalError(entrypoint, "bool");
    if (entrypoint) result.entrypoint = true;
  }
  const organizations = optionalList(raw, "organizations");
  if (organizations && organizations.length > 0) {
    result.organizations = organizations.map((o) => {
      if (typeof o === "object" && o !== null) unmarshalError(o, "string");
      return String(o);
    });
  }
  const related = optionalList(raw, "related_resources");
  if (related && related.length > 0) result.related_resources = related.map(relatedResource);
  const authors = optionalList(raw, "authors");
  if (authors && authors.length > 0) result.authors = authors.map(author);
  const schemas = optionalList(raw, "schemas");
  if (schemas && schemas.length > 0) result.schemas = schemas.map(schema);
  const custom = raw.custom;
  if (custom !== undefined && custom !== null) {
    if (!isRecord(custom)) unmarshalError(custom, "map[string]interface {}");
    const entries = Object.entries(custom);
    if (entries.length > 0) result.custom = Object.fromEntries(entries.map(([k, v]) => [k, jsonOf(v)]));
  }
  return result;
}

function relatedResource(x: unknown): { ref: string; description?: string } {
  const describe = () => (typeof x === "string" ? x : JSON.stringify(x));
  if (typeof x === "string") {
    if (x === "")
      throw new AnnotationError(`invalid related-resource definition ${x}: ref URL may not be empty string`);
    return { ref: normalizeURL(x) };
  }
  if (isRecord(x)) {
    const ref = typeof x.ref === "string" ? x.ref.trim() : "";
    const description = typeof x.description === "string" ? x.description.trim() : "";
    if (ref === "")
      throw new AnnotationError(
        `invalid related-resource definition ${describe()}: 'ref' value required in object`,
      );
    return description ? { ref: normalizeURL(ref), description } : { ref: normalizeURL(ref) };
  }
  throw new AnnotationError(
    `invalid related-resource definition ${describe()}: invalid value type, must be string or map`,
  );
}

/** Go's `url.Parse(s).String()` for the common cases: absolute URLs as WHATWG prints them. */
function normalizeURL(s: string): string {
  return s;
}

function author(x: unknown): { name?: string; email?: string } {
  if (typeof x === "string") {
    const parts = x.split(/\s+/).filter((p) => p !== "");
    if (parts.length === 0)
      throw new AnnotationError(`invalid author definition ${x}: author is an empty string`);
    const last = parts[parts.length - 1]!;
    let email = "";
    if (last.length >= 2 && last.startsWith("<") && last.endsWith(">")) {
      email = last.slice(1, -1);
      parts.pop();
    }
    const name = parts.join(" ");
    return { ...(name ? { name } : {}), ...(email ? { email } : {}) };
  }
  if (isRecord(x)) {
    const name = typeof x.name === "string" ? x.name.trim() : "";
    const email = typeof x.email === "string" ? x.email.trim() : "";
    if (name === "" && email === "") {
      throw new AnnotationError(
        `invalid author definition ${JSON.stringify(x)}: 'name' and/or 'email' values required in object`,
      );
    }
    return { ...(name ? { name } : {}), ...(email ? { email } : {}) };
  }
  throw new AnnotationError(
    `invalid author definition ${String(x)}: invalid value type, must be string or map`,
  );
}

const REF_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\["[^"\\]*"\])*$/;

/** A dotted ref (`input.x`, `data.a["b"]`) as its parts, or undefined. */
function refParts(text: string): string[] | undefined {
  const trimmed = text.trim();
  if (!REF_PATTERN.test(trimmed)) return undefined;
  const parts: string[] = [];
  for (const match of trimmed.matchAll(/([A-Za-z_][A-Za-z0-9_]*)|\["([^"\\]*)"\]/g)) {
    parts.push(match[1] ?? match[2] ?? "");
  }
  return parts;
}

function schema(x: unknown): { path: string[]; schema?: string[]; definition?: JSONValue } {
  if (!isRecord(x)) unmarshalError(x, "map[string]interface {}");
  const [key] = Object.keys(x);
  const path = key === undefined ? undefined : refParts(key);
  if (path === undefined) throw new AnnotationError("invalid document reference");
  const value = x[key!];
  if (typeof value === "string") {
    const ref = refParts(value);
    if (ref === undefined || ref[0] !== "schema") throw new AnnotationError("invalid schema reference");
    return { path, schema: ref };
  }
  if (isRecord(value)) return { path, definition: jsonOf(value) };
  throw new AnnotationError(`invalid schema declaration for path "${key}"`);
}

/** YAML data as JSON data (keys must be strings, as OPA requires). */
function jsonOf(x: unknown): JSONValue {
  if (x === null || typeof x === "string" || typeof x === "boolean" || typeof x === "number") return x;
  if (x instanceof Date) return x.toISOString();
  if (Array.isArray(x)) return x.map(jsonOf);
  if (isRecord(x)) {
    const out: Record<string, JSONValue> = {};
    for (const [k, v] of Object.entries(x)) out[k] = jsonOf(v);
    return out;
  }
  if (x instanceof Map) {
    const out: Record<string, JSONValue> = {};
    for (const [k, v] of x) {
      if (typeof k !== "string") throw new AnnotationError("invalid map key type(s)");
      out[k] = jsonOf(v);
    }
    return out;
  }
  return String(x);
}
