/**
 * `contracts: import` at serve: the registry of the configured contracts plus one imported
 * contract for each tool, resource and prompt the servers that ask for it list now (rebuilt
 * whenever such a server's catalog changes), so that a new tool appears without a hand edit, and
 * is still decided by the policy like any other.
 *
 * What is written wins: a tool a configured contract already governs keeps that contract, and an
 * imported contract whose name would clash with one already there, or whose schema does not
 * compile, is left out (and said once). Unless the server entry trusts hints, an imported tool is
 * `committing` with `idempotency: none`, whatever its annotations claim (see `hints.ts`).
 */
import { CompiledContractRegistry, type ContractRegistry, parseToolContracts } from "../registry.ts";
import { modelFamilies, type ToolContract, type ToolContractInput } from "../schema.ts";
import { importContracts, type ServerCatalog } from "./build.ts";

export interface ImportingServer {
  server: string;
  trustHints: boolean;
}

/** What a contract governs on which server (`server tool name`, `server resource uri`, …). */
function governedKey(contract: Pick<ToolContractInput, "backend">): string | undefined {
  const backend = contract.backend;
  switch (backend.kind) {
    case "mcp":
      return JSON.stringify([backend.server, "tool", backend.tool]);
    case "mcp_resource":
      return JSON.stringify([backend.server, "resource", backend.uri]);
    case "mcp_prompt":
      return JSON.stringify([backend.server, "prompt", backend.prompt]);
    default:
      return undefined;
  }
}

/** Every name a registry answers to: canonical names and each family's model-facing names. */
function namesOf(registry: ContractRegistry): string[] {
  return [
    ...registry.list().map((contract) => contract.name),
    ...modelFamilies.flatMap((family) => registry.modelNames(family)),
  ];
}

export class ImportedContracts {
  readonly #reported = new Set<string>();

  constructor(
    private readonly configured: ContractRegistry,
    private readonly servers: readonly ImportingServer[],
    private readonly report: (message: string) => void,
  ) {}

  /** The configured contracts and those imported from `catalogs` (of connected servers). */
  registry(catalogs: ReadonlyArray<ServerCatalog & { server: string }>): ContractRegistry {
    const taken = new Set(namesOf(this.configured));
    const governed = new Set(this.configured.list().map(governedKey));
    const imported: ToolContract[] = [];
    for (const { server, trustHints } of this.servers) {
      const catalog = catalogs.find((candidate) => candidate.server === server);
      if (catalog === undefined) continue;
      for (const { contract, source } of importContracts(catalog, { server, trustHints })) {
        const what = `${source.kind} ${JSON.stringify(source.name)} of the MCP server ${server}`;
        const key = governedKey(contract);
        if (governed.has(key)) continue;
        let single = this.#compiled(contract, what);
        if (single === undefined) continue;
        let names = namesOf(single);
        // The server's own tool name is the model-facing name unless another contract has it:
        // then the canonical one (`server_tool`).
        if (names.some((name) => taken.has(name)) && contract.model_views !== undefined) {
          single = this.#compiled({ ...contract, model_views: [] }, what) ?? single;
          names = namesOf(single);
        }
        const clash = names.find((name) => taken.has(name));
        const [parsed] = single.list();
        if (parsed === undefined) continue;
        if (clash !== undefined) {
          this.#once(
            `mcp: ${what} is not imported: the name ${JSON.stringify(clash)} is already used; write its contract by hand with another name`,
          );
          continue;
        }
        for (const name of names) taken.add(name);
        governed.add(key);
        imported.push(parsed);
      }
    }
    return new CompiledContractRegistry([...this.configured.list(), ...imported], { pointer: "/tools" });
  }

  /** `contract` alone in a registry (its schemas compiled), or undefined (and said) when it does not compile. */
  #compiled(contract: ToolContractInput, what: string): ContractRegistry | undefined {
    let single: ContractRegistry;
    try {
      single = new CompiledContractRegistry(parseToolContracts([contract]));
    } catch (error) {
      this.#once(
        `mcp: ${what} is not imported: ${error instanceof Error ? error.message : String(error)}; write its contract by hand`,
      );
      return undefined;
    }
    return single;
  }

  #once(message: string): void {
    if (this.#reported.has(message)) return;
    this.#reported.add(message);
    this.report(message);
  }
}
