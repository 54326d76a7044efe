/**
 * `x-mcp-header` (MCP 2026-07-28, Streamable HTTP, "Custom Headers from Tool Parameters"): a
 * property of a tool's input schema declared `{type: string, x-mcp-header: "Region"}` is mirrored
 * by a client into an `Mcp-Param-Region` header on every `tools/call`, and the server refuses a
 * call whose header disagrees with the body (src/mcp/param-headers.ts). Writ accepts the keyword
 * on a top-level property of an input schema only (the specification allows nested `properties`
 * chains too; Writ keeps to the simplest), on a string, integer or boolean, as a valid header
 * token unique without regard to case; anywhere else it is a configuration error, since a
 * conforming client drops a tool whose declaration is invalid.
 */
import { escapeToken } from "../core/json-pointer.ts";
import { isSchema, schemaSites } from "./paths.ts";

/** The keyword naming the header a property is mirrored into (`Mcp-Param-<value>`). */
export const MCP_HEADER_KEYWORD = "x-mcp-header";

/** One property mirrored into a header. */
export interface McpHeaderDeclaration {
  /** The top-level argument. */
  property: string;
  /** The name after `Mcp-Param-` (as declared; header names compare without regard to case). */
  header: string;
  type: "string" | "integer" | "boolean";
}

/** A bad declaration: where it is in the schema (JSON Pointer) and what to do. */
export interface McpHeaderProblem {
  pointer: string;
  message: string;
}

/** RFC 9110's `token` (`1*tchar`): what a header name may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TYPES = new Set<unknown>(["string", "integer", "boolean"]);

function isType(value: unknown): value is McpHeaderDeclaration["type"] {
  return TYPES.has(value);
}

const marks = (schema: Record<string, unknown>) => Object.hasOwn(schema, MCP_HEADER_KEYWORD);

/** The declaration of one top-level property (`pointer` is where it is), or what is wrong with it. */
function declarationOf(
  property: string,
  schema: Record<string, unknown>,
  pointer: string,
): McpHeaderDeclaration | McpHeaderProblem {
  const header = schema[MCP_HEADER_KEYWORD];
  if (typeof header !== "string" || !TOKEN.test(header)) {
    return {
      pointer: `${pointer}/${MCP_HEADER_KEYWORD}`,
      message: `must be the name of the header after Mcp-Param-, letters, digits and !#$%&'*+-.^_\`|~ only (e.g. "Region"), not ${JSON.stringify(header)}`,
    };
  }
  if (!isType(schema.type)) {
    return {
      pointer: `${pointer}/type`,
      message: `${MCP_HEADER_KEYWORD} mirrors a string, integer or boolean only (MCP allows no other type; got type ${JSON.stringify(schema.type) ?? "unset"}): declare one, or remove ${MCP_HEADER_KEYWORD}`,
    };
  }
  return { property, header, type: schema.type };
}

/**
 * The headers an input schema declares, and the problems of its declarations (pointers into the
 * schema). `allowed` false (an output schema): every declaration is a problem.
 */
export function mcpHeaders(
  schema: Record<string, unknown>,
  allowed = true,
): { declarations: McpHeaderDeclaration[]; problems: McpHeaderProblem[] } {
  const declarations: McpHeaderDeclaration[] = [];
  const problems: McpHeaderProblem[] = [];
  const properties = allowed && isSchema(schema.properties) ? schema.properties : {};
  const reached = new Set<string>();
  const seen = new Map<string, string>();
  for (const [property, sub] of Object.entries(properties)) {
    if (!isSchema(sub) || !marks(sub)) continue;
    const pointer = `/properties/${escapeToken(property)}`;
    reached.add(pointer);
    const found = declarationOf(property, sub, pointer);
    if ("pointer" in found) {
      problems.push(found);
      continue;
    }
    const other = seen.get(found.header.toLowerCase());
    if (other !== undefined) {
      problems.push({
        pointer: `${pointer}/${MCP_HEADER_KEYWORD}`,
        message: `Mcp-Param-${found.header} is already the header of ${other} (header names compare without regard to case): name another`,
      });
      continue;
    }
    seen.set(found.header.toLowerCase(), property);
    declarations.push(found);
  }
  for (const site of schemaSites(schema, marks)) {
    if (reached.has(site)) continue;
    problems.push({
      pointer: `${site}/${MCP_HEADER_KEYWORD}`,
      message: allowed
        ? `Writ reads ${MCP_HEADER_KEYWORD} on a top-level property of an input schema only (under properties, not nested, not under a combinator, items, $defs or $ref): move it there or remove it`
        : `${MCP_HEADER_KEYWORD} belongs to input schemas only: remove it`,
    });
  }
  return { declarations, problems };
}

/** `schema` without its `x-mcp-header` declarations (a view for a model family other than MCP's). */
export function withoutMcpHeaders<S extends Record<string, unknown>>(schema: S): S {
  const properties = schema.properties;
  if (!isSchema(properties) || !Object.values(properties).some((sub) => isSchema(sub) && marks(sub)))
    return schema;
  const stripped = Object.fromEntries(
    Object.entries(properties).map(([name, sub]) => {
      if (!isSchema(sub) || !marks(sub)) return [name, sub];
      const { [MCP_HEADER_KEYWORD]: _, ...rest } = sub;
      return [name, rest];
    }),
  );
  return { ...schema, properties: stripped };
}
