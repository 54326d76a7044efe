/**
 * Drift between the contracts written for an MCP server and what the server lists now, for
 * `writ contracts import --check` in CI: a tool, resource or prompt the server lists that no
 * contract governs (added), a contract whose tool is gone (removed), and a contract whose
 * schemas differ from the server's (changed, with the JSON Pointer of each difference). A
 * contract that says `side_effect: none` for a tool whose server no longer claims it is read-only
 * is changed too. Descriptions and effect fields are the operator's to edit and are not compared
 * otherwise.
 */
import { isDeepStrictEqual } from "node:util";
import { formatPointer } from "../../core/json-pointer.ts";
import type { ToolContract } from "../schema.ts";
import { type ImportedKind, promptSchema, type ServerCatalog } from "./build.ts";

export interface Difference {
  /** The contract's field: `input_schema`, `output_schema` or `side_effect`. */
  field: string;
  /** JSON Pointer inside the field (`""`: the field itself). */
  pointer: string;
  /** Relative to the contract: the server's list added, removed or changed the value there. */
  change: "added" | "removed" | "changed";
  /** What the server says now, for `side_effect`. */
  detail?: string;
}

export type Drift =
  | { change: "added"; kind: ImportedKind; name: string }
  | { change: "removed"; kind: ImportedKind; name: string; contract: string }
  | { change: "changed"; kind: ImportedKind; name: string; contract: string; differences: Difference[] };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Where `after` differs from `before`, as JSON Pointers (objects by key, arrays by index). */
export function jsonDifferences(
  before: unknown,
  after: unknown,
  at: string[] = [],
): Omit<Difference, "field">[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => {
      if (!Object.hasOwn(after, key))
        return [{ pointer: formatPointer([...at, key]), change: "removed" as const }];
      if (!Object.hasOwn(before, key))
        return [{ pointer: formatPointer([...at, key]), change: "added" as const }];
      return jsonDifferences(before[key], after[key], [...at, key]);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, index) => index).flatMap((index) => {
      const pointer = formatPointer([...at, String(index)]);
      if (index >= after.length) return [{ pointer, change: "removed" as const }];
      if (index >= before.length) return [{ pointer, change: "added" as const }];
      return jsonDifferences(before[index], after[index], [...at, String(index)]);
    });
  }
  return isDeepStrictEqual(before, after) ? [] : [{ pointer: formatPointer(at), change: "changed" }];
}

function schemaDifferences(field: string, before: unknown, after: unknown): Difference[] {
  if (before === undefined && after === undefined) return [];
  if (before === undefined) return [{ field, pointer: "", change: "added" }];
  if (after === undefined) return [{ field, pointer: "", change: "removed" }];
  return jsonDifferences(before, after).map((difference) => ({ field, ...difference }));
}

/** Whose key a contract of `server` governs: a tool or prompt name, a resource URI or template. */
function governed(
  contract: ToolContract,
  server: string,
): { kind: "tool" | "resource" | "prompt"; key: string } | undefined {
  const backend = contract.backend;
  if (!("server" in backend) || backend.server !== server) return undefined;
  if (backend.kind === "mcp") return { kind: "tool", key: backend.tool };
  if (backend.kind === "mcp_resource") return { kind: "resource", key: backend.uri };
  return { kind: "prompt", key: backend.prompt };
}

/** The drift between `contracts` (those of `server` count) and `catalog`, in the server's order. */
export function contractDrift(
  contracts: readonly ToolContract[],
  server: string,
  catalog: ServerCatalog,
): Drift[] {
  const byKey = new Map<string, ToolContract>();
  for (const contract of contracts) {
    const key = governed(contract, server);
    if (key !== undefined && !byKey.has(`${key.kind}:${key.key}`))
      byKey.set(`${key.kind}:${key.key}`, contract);
  }
  const drift: Drift[] = [];
  const seen = new Set<string>();
  const compare = (
    kind: ImportedKind,
    family: "tool" | "resource" | "prompt",
    name: string,
    differences: (contract: ToolContract) => Difference[],
  ) => {
    const key = `${family}:${name}`;
    seen.add(key);
    const contract = byKey.get(key);
    if (contract === undefined) {
      drift.push({ change: "added", kind, name });
      return;
    }
    const found = differences(contract);
    if (found.length > 0)
      drift.push({ change: "changed", kind, name, contract: contract.name, differences: found });
  };
  for (const tool of catalog.tools) {
    compare("tool", "tool", tool.name, (contract) => [
      ...schemaDifferences("input_schema", contract.input_schema, tool.inputSchema),
      ...schemaDifferences("output_schema", contract.output_schema, tool.outputSchema),
      ...(contract.side_effect === "none" && tool.annotations?.readOnlyHint !== true
        ? [
            {
              field: "side_effect",
              pointer: "",
              change: "changed" as const,
              detail:
                "the contract says none, but the server no longer claims the tool is read-only (readOnlyHint)",
            },
          ]
        : []),
    ]);
  }
  for (const resource of catalog.resources) compare("resource", "resource", resource.uri, () => []);
  for (const template of catalog.templates) compare("template", "resource", template.uriTemplate, () => []);
  for (const prompt of catalog.prompts) {
    compare("prompt", "prompt", prompt.name, (contract) =>
      schemaDifferences("input_schema", contract.input_schema, promptSchema(prompt)),
    );
  }
  for (const [key, contract] of byKey) {
    if (seen.has(key)) continue;
    const governs = governed(contract, server);
    if (governs === undefined) continue;
    drift.push({ change: "removed", kind: governs.kind, name: governs.key, contract: contract.name });
  }
  return drift;
}
