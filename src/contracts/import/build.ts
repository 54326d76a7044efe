/**
 * Contracts from an MCP server's own lists (`tools/list`, `resources/list`,
 * `resources/templates/list`, `prompts/list`): one per tool with the server's input and output
 * schemas as they are, its description (its title when it has none), an `mcp` backend and the
 * server's tool name as the model-facing name; one per resource, resource template and prompt,
 * which only read (`side_effect: none` by the protocol, not by a hint). A tool's effect fields come
 * from `hints.ts`. Each contract carries the notes a reviewer needs beside it.
 */
import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ToolContractInput } from "../schema.ts";
import { effectDefaults } from "./hints.ts";
import { canonicalName, modelName } from "./names.ts";

/** What a server lists; `writ contracts import` and `contracts: import` at serve read the same. */
export interface ServerCatalog {
  tools: readonly Tool[];
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
  prompts: readonly Prompt[];
}

export type ImportedKind = "tool" | "resource" | "template" | "prompt";

export interface ImportedContract {
  contract: ToolContractInput;
  /** What it governs on the server: a tool or prompt name, a resource URI or URI template. */
  source: { kind: ImportedKind; name: string };
  /** Comment lines above the contract: the server's title, renamings, what else the hints say. */
  heading: string[];
  /** A comment beside each field whose value is a default someone should review. */
  notes: { side_effect?: string; idempotency?: string };
}

export interface ImportOptions {
  /** The server's name under `mcp.servers` (backends name it; canonical names start with it). */
  server: string;
  /** Take effect fields from the server's hints (marked as claims), or the conservative defaults. */
  trustHints: boolean;
}

/** The contracts for everything `catalog` lists, tools first, in the server's order. */
export function importContracts(catalog: ServerCatalog, options: ImportOptions): ImportedContract[] {
  const names = new Names();
  return [
    ...catalog.tools.map((tool) => toolContract(tool, options, names)),
    ...catalog.resources.map((resource) =>
      readContract(options.server, names, "resource", resource, resource.uri, {
        uri: { type: "string", const: resource.uri },
      }),
    ),
    ...catalog.templates.map((template) =>
      readContract(options.server, names, "template", template, template.uriTemplate, {
        uri: { type: "string" },
        ...Object.fromEntries(
          templateVariables(template.uriTemplate).map((name) => [name, { type: "string" }]),
        ),
      }),
    ),
    ...catalog.prompts.map((prompt) => promptContract(options.server, names, prompt)),
  ];
}

/** Keeps canonical and model-facing names unique within one import (`--2`, `--3` for later clashes). */
class Names {
  readonly #taken = new Set<string>();

  unique(name: string): string {
    let candidate = name;
    for (let n = 1; this.#taken.has(candidate); n++) {
      candidate = `${name.slice(0, 64 - 3 - String(n).length)}--${n}`;
    }
    this.#taken.add(candidate);
    return candidate;
  }
}

function describedAs(
  item: { description?: string | undefined; title?: string | undefined },
  fallback: string,
): string {
  const description = item.description?.trim();
  if (description) return description;
  return item.title?.trim() || fallback;
}

function toolContract(tool: Tool, options: ImportOptions, names: Names): ImportedContract {
  const { server } = options;
  const effects = effectDefaults(tool.annotations, options.trustHints);
  const name = names.unique(canonicalName(server, "tool", tool.name));
  const shown = names.unique(modelName(tool.name));
  const title = tool.title ?? tool.annotations?.title;
  const heading = [
    ...(title === undefined ? [] : [`${title} (the server's title)`]),
    ...(shown === tool.name
      ? []
      : [
          `the server names this tool ${JSON.stringify(tool.name)}, which a model cannot call: shown as ${shown}`,
        ]),
    ...(tool.description?.trim() ? [] : ["the server gives no description: write what the tool does"]),
    ...effects.remarks,
  ];
  const contract: ToolContractInput = {
    name,
    version: "1",
    description: describedAs(tool, `The tool ${tool.name} of the MCP server ${server}`),
    side_effect: effects.side_effect,
    idempotency: effects.idempotency,
    input_schema: structuredClone(tool.inputSchema),
    ...(tool.outputSchema === undefined ? {} : { output_schema: structuredClone(tool.outputSchema) }),
    backend: { kind: "mcp", server, tool: tool.name },
    model_views: [{ family: "default", name: shown }],
  };
  return { contract, source: { kind: "tool", name: tool.name }, heading, notes: effects.notes };
}

/** A resource or resource template: reading it is `resources/read`, which only reads. */
function readContract(
  server: string,
  names: Names,
  kind: "resource" | "template",
  item: Resource | ResourceTemplate,
  uri: string,
  properties: Record<string, unknown>,
): ImportedContract {
  const what = kind === "resource" ? `the resource ${uri}` : `the resources ${uri}`;
  const contract: ToolContractInput = {
    name: names.unique(canonicalName(server, "resource", item.name)),
    version: "1",
    description: describedAs(item, `Reads ${what} of the MCP server ${server}`),
    side_effect: "none",
    idempotency: "natural",
    input_schema: { type: "object", properties, required: ["uri"] },
    backend: { kind: "mcp_resource", server, uri },
  };
  return {
    contract,
    source: { kind, name: uri },
    heading: [
      `${item.title ?? item.name}: reads ${what} (resources/read only reads: side_effect none by the protocol, not by a hint)`,
    ],
    notes: {},
  };
}

function promptContract(server: string, names: Names, prompt: Prompt): ImportedContract {
  const contract: ToolContractInput = {
    name: names.unique(canonicalName(server, "prompt", prompt.name)),
    version: "1",
    description: describedAs(prompt, `The prompt ${prompt.name} of the MCP server ${server}`),
    side_effect: "none",
    idempotency: "natural",
    input_schema: promptSchema(prompt),
    backend: { kind: "mcp_prompt", server, prompt: prompt.name },
  };
  return {
    contract,
    source: { kind: "prompt", name: prompt.name },
    heading: [
      `${prompt.title ?? prompt.name}: a prompt (prompts/get only reads: side_effect none by the protocol)`,
    ],
    notes: {},
  };
}

/** A prompt's arguments as the JSON Schema of a call's arguments: strings, the required ones required. */
export function promptSchema(prompt: Prompt): ToolContractInput["input_schema"] {
  const args = prompt.arguments ?? [];
  const required = args.filter((arg) => arg.required === true).map((arg) => arg.name);
  return {
    type: "object",
    properties: Object.fromEntries(
      args.map((arg) => [
        arg.name,
        { type: "string", ...(arg.description === undefined ? {} : { description: arg.description }) },
      ]),
    ),
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
}

/** The variable names of an RFC 6570 URI template (`docs://{id}/{+path}` → id, path). */
export function templateVariables(template: string): string[] {
  const names = new Set<string>();
  for (const [, expression] of template.matchAll(/\{([^}]*)\}/g)) {
    for (const spec of (expression ?? "").replace(/^[+#./;?&]/, "").split(",")) {
      const name = spec.replace(/(\*|:\d+)$/, "").trim();
      if (name !== "") names.add(name);
    }
  }
  return [...names];
}
