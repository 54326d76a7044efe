/**
 * The Rego front end: parse modules, queries and terms (Rego v1, or v0 with `regoVersion: 0`)
 * into the AST of `./ast.ts`, and print ASTs back to source. Parsing never throws; problems come
 * back as `rego_parse_error`s.
 */
import type { RegoError } from "../errors.ts";
import type { Body, Module, Term } from "./ast.ts";
import type { RegoVersion } from "./lexer.ts";
import {
  type ModuleOptions,
  type ParseOptions,
  parseModuleSource,
  parseQuerySource,
  parseTermSource,
} from "./parser.ts";

export type * from "./ast.ts";
export { astEqual, stripLocations, type Unlocated } from "./equality.ts";
export { printBody, printModule, printTerm } from "./printer.ts";
export type { ModuleOptions, ParseOptions, RegoVersion };

/** Parses a module (`package …`, imports, rules). `module` is undefined when there are errors. */
export function parseModule(
  source: string,
  file: string,
  options?: ModuleOptions,
): { module: Module | undefined; errors: RegoError[] } {
  return parseModuleSource(source, file, options);
}

/** Parses a query such as `data.test.p = x` or `x := 1; y = x`. */
export function parseQuery(
  source: string,
  file: string,
  options?: ParseOptions,
): { body: Body | undefined; errors: RegoError[] } {
  return parseQuerySource(source, file, options);
}

/** Parses one term, such as an `input_term` value `{"a": {1, 2}}`. */
export function parseTerm(
  source: string,
  file: string,
  options?: ParseOptions,
): { term: Term | undefined; errors: RegoError[] } {
  return parseTermSource(source, file, options);
}
