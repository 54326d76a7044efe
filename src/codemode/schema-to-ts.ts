/**
 * A TypeScript type for the JSON Schema subset tool contracts use: objects (properties, required,
 * additionalProperties), arrays (items, prefixItems), scalars, `enum`, `const`, unions (`type`
 * lists, `anyOf`, `oneOf`), intersections (`allOf`); `format`, bounds and patterns become doc
 * comments. Anything else (a `$ref`, `not`, `if`) is `unknown`: the declaration is what a model
 * reads, the contract's schema is still what Writ checks, so loose is safe and wrong is not.
 *
 * A library (json-schema-to-typescript) would pull in a formatter, a `$ref` resolver and lodash
 * for what is here some eighty lines.
 */
import { isRecord } from "../core/json.ts";

/** Nesting beyond this is `unknown` (contract schemas are small; this bounds a hostile one). */
const MAX_DEPTH = 8;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key as TypeScript writes it: bare when it is an identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** A doc comment (`/** … *\/`) for `lines`, indented; empty when there is nothing to say. */
export function docComment(lines: readonly string[], indent: string): string {
  const text = lines.flatMap((line) => line.split("\n")).map((line) => line.replaceAll("*/", "*\\/"));
  if (text.length === 0) return "";
  if (text.length === 1) return `${indent}/** ${text[0]} */\n`;
  return `${indent}/**\n${text.map((line) => `${indent} * ${line}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

/** What a schema says beyond its type, as doc-comment lines. */
function notes(schema: Record<string, unknown>): string[] {
  const lines: string[] = [];
  if (typeof schema.description === "string") lines.push(schema.description);
  const facts: string[] = [];
  for (const key of [
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
  ]) {
    const value = schema[key];
    if (typeof value === "string" || typeof value === "number") facts.push(`${key}: ${value}`);
  }
  if (facts.length > 0) lines.push(facts.join(", "));
  return lines;
}

function literal(value: unknown): string {
  return value === null || ["string", "number", "boolean"].includes(typeof value)
    ? JSON.stringify(value)
    : "unknown";
}

function union(types: string[]): string {
  const distinct = [...new Set(types)];
  if (distinct.includes("unknown")) return "unknown";
  return distinct.length === 0 ? "never" : distinct.join(" | ");
}

function objectType(schema: Record<string, unknown>, indent: string, depth: number): string {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
  );
  const inner = `${indent}  `;
  const members = Object.entries(properties).map(([name, property]) => {
    const doc = isRecord(property) ? docComment(notes(property), inner) : "";
    const optional = required.has(name) ? "" : "?";
    return `${doc}${inner}${propertyKey(name)}${optional}: ${typeOf(property, inner, depth + 1)};\n`;
  });
  const extra = schema.additionalProperties;
  if (extra !== false && (extra !== undefined || members.length === 0)) {
    const value = extra === undefined || extra === true ? "unknown" : typeOf(extra, inner, depth + 1);
    members.push(`${inner}[key: string]: ${members.length > 0 ? "unknown" : value};\n`);
  }
  return members.length === 0 ? "Record<string, never>" : `{\n${members.join("")}${indent}}`;
}

function arrayType(schema: Record<string, unknown>, indent: string, depth: number): string {
  if (Array.isArray(schema.prefixItems)) {
    const items = schema.prefixItems.map((item) => typeOf(item, indent, depth + 1));
    const rest = schema.items === false ? "" : `, ...${element(schema.items, indent, depth)}[]`;
    return `[${items.join(", ")}${rest}]`;
  }
  return `${element(schema.items, indent, depth)}[]`;
}

/** An array's element type, parenthesized when it is a union. */
function element(items: unknown, indent: string, depth: number): string {
  const type = items === undefined ? "unknown" : typeOf(items, indent, depth + 1);
  return /[|&]/.test(type) && !type.startsWith("{") ? `(${type})` : type;
}

function typeNamed(name: unknown, schema: Record<string, unknown>, indent: string, depth: number): string {
  switch (name) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "object":
      return objectType(schema, indent, depth);
    case "array":
      return arrayType(schema, indent, depth);
    default:
      return "unknown";
  }
}

/** The TypeScript type of `schema`, formatted for a declaration indented by `indent`. */
export function typeOf(schema: unknown, indent = "", depth = 0): string {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (!isRecord(schema) || depth > MAX_DEPTH) return "unknown";
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options)) return union(options.map((option) => typeOf(option, indent, depth + 1)));
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((part) => typeOf(part, indent, depth + 1)).filter((t) => t !== "unknown");
    return parts.length === 0 ? "unknown" : parts.join(" & ");
  }
  if (Array.isArray(schema.type)) {
    return union(schema.type.map((name) => typeNamed(name, schema, indent, depth)));
  }
  if (schema.type === undefined) {
    if (isRecord(schema.properties)) return objectType(schema, indent, depth);
    if (schema.items !== undefined || Array.isArray(schema.prefixItems))
      return arrayType(schema, indent, depth);
  }
  return typeNamed(schema.type, schema, indent, depth);
}
