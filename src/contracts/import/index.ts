/** Contracts imported from an MCP server's own lists (`writ contracts import`, `contracts: import`). */
export {
  type ImportedContract,
  type ImportedKind,
  type ImportOptions,
  importContracts,
  type ServerCatalog,
} from "./build.ts";
export { contractDrift, type Difference, type Drift, jsonDifferences } from "./drift.ts";
export { effectDefaults, type ToolHints } from "./hints.ts";
export { ImportedContracts, type ImportingServer } from "./serve.ts";
export { type ImportedDocument, importedYaml } from "./yaml.ts";
