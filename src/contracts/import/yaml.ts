/**
 * Imported contracts as the YAML a reviewer reads and a configuration loads: the `mcp.servers`
 * entry the contracts' backends name and the `tools:` list, with a comment above each contract
 * (the server's title, renamings, what the hints say) and beside each field whose value came from
 * the server's hints or a default. The document loads through `writ serve`'s own parser unchanged.
 */
import { Document, isMap, isPair, isScalar, isSeq, type Node, type Pair, type YAMLMap } from "yaml";
import type { ImportedContract } from "./build.ts";

export interface ImportedDocument {
  /** The server's name under `mcp.servers`. */
  server: string;
  /** The `mcp.servers` entry to write, or none (when the configuration has it already). */
  entry: Record<string, unknown> | undefined;
  /** How the server was reached, for the heading: a command line or a URL. */
  origin: string;
  /** `serverInfo` from `initialize`. */
  info: { name: string; version: string };
  imported: readonly ImportedContract[];
}

const HEADING = `
Review every contract before you serve it. Schemas and descriptions are the server's own.
side_effect and idempotency come from the server's annotations (readOnlyHint, destructiveHint,
idempotentHint): hints, the server's claims about itself, not facts about its effects. A policy
must never trust them: each field taken from one says so beside it; confirm or change it. A tool
without hints gets Writ's conservative defaults (committing, idempotency none). Every call is
still decided by the policy, which denies what it does not allow.
\`writ contracts import … --check <this file>\` reports when the server's lists drift from these.`;

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((item): item is Pair => isPair(item) && isScalar(item.key) && item.key.value === key);
}

function commentLines(lines: readonly string[]): string {
  return lines.map((line) => ` ${line}`).join("\n");
}

/** The YAML text of `document` (see the module's comment). */
export function importedYaml(document: ImportedDocument): string {
  const { server, info, origin, imported } = document;
  const doc = new Document({
    ...(document.entry === undefined ? {} : { mcp: { servers: [document.entry] } }),
    tools: imported.map((item) => item.contract),
  });
  const what = info.name === "" ? "" : ` (${info.name}${info.version === "" ? "" : ` ${info.version}`})`;
  doc.commentBefore = commentLines([
    `Contracts imported by writ contracts import from the MCP server ${JSON.stringify(server)}${what},`,
    `reached with: ${origin}`,
    ...HEADING.split("\n"),
  ]);
  const tools = doc.get("tools", true);
  if (!isSeq(tools)) return doc.toString({ lineWidth: 100 });
  for (const [index, node] of tools.items.entries()) {
    const item = imported[index];
    if (item === undefined || !isMap(node)) continue;
    if (item.heading.length > 0) node.commentBefore = commentLines(item.heading);
    for (const [field, note] of Object.entries(item.notes)) {
      const key = pairOf(node, field)?.key;
      if (isScalar(key)) key.commentBefore = commentLines([note]);
    }
    for (const field of ["backend", "model_views"]) {
      const value: unknown = pairOf(node, field)?.value;
      if (isMap(value) || isSeq(value)) flow(value);
    }
  }
  return doc.toString({ lineWidth: 100 });
}

/** Writes `node` and what it holds on one line (`{kind: mcp, server: …}`), as hand-written contracts do. */
function flow(node: Node): void {
  if (isMap(node) || isSeq(node)) {
    node.flow = true;
    for (const item of node.items) if (isMap(item) || isSeq(item)) flow(item);
  }
}
