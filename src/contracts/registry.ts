/**
 * The contracts Writ knows, checked once at startup: unique canonical name and version, unique
 * model-facing names per model family, every schema compiled. Finds the contract a model's call
 * names and what each model family is shown.
 */
import { type FieldError, WritError } from "../core/errors.ts";
import { problemsFromZod } from "../core/field-errors.ts";
import type { ProposalSource } from "../core/types.ts";
import {
  compileSchema,
  createSchemaCompiler,
  SchemaCompileError,
  type SchemaCompiler,
  type SchemaViolation,
  type ValidateFunction,
  violationsOf,
} from "./json-schema.ts";
import { type McpHeaderDeclaration, mcpHeaders, withoutMcpHeaders } from "./mcp-headers.ts";
import { type PathShape, pathShape } from "./paths.ts";
import {
  type ModelFacingTool,
  type ModelFamily,
  modelFamilies,
  type ToolContract,
  toolContractsSchema,
} from "./schema.ts";

/** The model family whose view a call from `source` was made against. */
export function modelFamilyOf(source: ProposalSource): ModelFamily {
  return source === "canonical" ? "default" : source;
}

/** The default model-facing name of a canonical name: dots become underscores (`repo.read` → `repo_read`). */
export function defaultModelName(canonicalName: string): string {
  return canonicalName.replaceAll(".", "_");
}

/** `name@version`, the key of a contract. */
export function contractKey(contract: Pick<ToolContract, "name" | "version">): string {
  return `${contract.name}@${contract.version}`;
}

interface CompiledContract {
  contract: ToolContract;
  /** Position in the list the registry was built from, for error pointers. */
  index: number;
  input: ValidateFunction;
  output: ValidateFunction | undefined;
  /** Where the input schema declares paths (src/contracts/paths.ts); undefined when nowhere. */
  paths: PathShape | undefined;
  views: Record<ModelFamily, ModelFacingTool>;
  /** The `x-mcp-header` declarations of the MCP view's input schema (src/contracts/mcp-headers.ts). */
  mcpHeaders: readonly McpHeaderDeclaration[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

function compareVersions(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

/** The error for a `tools:` section with `problems` (at least one). */
function configError(problems: FieldError[]): WritError {
  const [first] = problems;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
  return new WritError(
    "invalid_argument",
    `the tool contracts are invalid: ${first?.path}: ${first?.message}${more}`,
    {
      fieldErrors: problems,
      suggestedFix: "Fix the listed fields of the tools section of the gateway config, then reload it.",
    },
  );
}

/**
 * The tool contracts as the gateway's parts read them (`Gateway.contracts`): looked up by the
 * name a model calls, by name and version, listed, and their schemas checked.
 */
export interface ContractRegistry {
  /** The contract a model's call names (its model-facing name for `source`, else the canonical one). */
  resolve(toolName: string, source: ProposalSource): ToolContract | undefined;
  get(name: string, version: string): ToolContract | undefined;
  versionsOf(name: string): string[];
  list(): readonly ToolContract[];
  modelNames(family: ModelFamily): string[];
  modelView(contract: ToolContract, family: ModelFamily): ModelFacingTool;
  pathsOf(contract: ToolContract): PathShape | undefined;
  /** The arguments of the contract's MCP view a 2026-07-28 client mirrors into `Mcp-Param-*` headers. */
  mcpHeadersOf(contract: ToolContract): readonly McpHeaderDeclaration[];
  checkInput(contract: ToolContract, args: unknown): SchemaViolation[];
  checkOutput(contract: ToolContract, result: unknown): SchemaViolation[];
}

/** The registry with every contract's schemas compiled once and its names indexed. */
export class CompiledContractRegistry implements ContractRegistry {
  readonly #byKey = new Map<string, CompiledContract>();
  readonly #byCanonicalName = new Map<string, CompiledContract[]>();
  readonly #byModelName = new Map<ModelFamily, Map<string, CompiledContract>>();
  readonly #ordered: ToolContract[];

  /**
   * A registry of already parsed contracts (see `parseToolContracts`). Throws
   * `WritError("invalid_argument")` with pointers `${pointer}/<index>/…` into the list when names
   * collide or a schema does not compile.
   */
  constructor(contracts: readonly ToolContract[], options: { pointer?: string } = {}) {
    const base = options.pointer ?? "";
    const ajv = createSchemaCompiler();
    const problems: FieldError[] = [];
    for (const [index, given] of contracts.entries()) {
      const compiled = this.#compile(ajv, structuredClone(given), index, base, problems);
      if (compiled === undefined) continue;
      const key = contractKey(compiled.contract);
      const earlier = this.#byKey.get(key);
      if (earlier !== undefined) {
        problems.push({
          path: `${base}/${index}/version`,
          message: `${key} is already declared at ${base}/${earlier.index}; give this one another version`,
        });
        continue;
      }
      this.#byKey.set(key, compiled);
      const versions = this.#byCanonicalName.get(compiled.contract.name) ?? [];
      versions.push(compiled);
      this.#byCanonicalName.set(compiled.contract.name, versions);
    }
    this.#indexModelNames(base, problems);
    if (problems.length > 0) throw configError(problems);
    this.#ordered = [...this.#byKey.values()]
      .map((entry) => entry.contract)
      .sort((a, b) => (a.name === b.name ? compareVersions(a.version, b.version) : a.name < b.name ? -1 : 1));
  }

  /** A registry from the raw `tools:` section of the config (`pointer` is where that section is). */
  static fromConfig(raw: unknown, pointer = ""): CompiledContractRegistry {
    return new CompiledContractRegistry(parseToolContracts(raw, pointer), { pointer });
  }

  #compile(
    ajv: SchemaCompiler,
    contract: ToolContract,
    index: number,
    base: string,
    problems: FieldError[],
  ): CompiledContract | undefined {
    const at = `${base}/${index}`;
    const compile = (schema: Record<string, unknown>, where: string): ValidateFunction | undefined => {
      try {
        return compileSchema(ajv, schema);
      } catch (error) {
        if (!(error instanceof SchemaCompileError)) throw error;
        problems.push({ path: `${where}${error.pointer}`, message: error.message });
        return undefined;
      }
    };
    const paths = pathShape(contract.input_schema);
    for (const problem of paths.problems) {
      problems.push({ path: `${at}/input_schema${problem.pointer}`, message: problem.message });
    }
    const headerProblems = this.#checkMcpHeaders(contract, at, problems);
    const input = compile(contract.input_schema, `${at}/input_schema`);
    const output =
      contract.output_schema === undefined
        ? undefined
        : compile(contract.output_schema, `${at}/output_schema`);
    let viewsCompile = true;
    for (const [viewIndex, view] of contract.model_views.entries()) {
      if (view.input_schema !== undefined) {
        viewsCompile =
          compile(view.input_schema, `${at}/model_views/${viewIndex}/input_schema`) !== undefined &&
          viewsCompile;
      }
    }
    if (
      input === undefined ||
      paths.problems.length > 0 ||
      headerProblems ||
      (contract.output_schema !== undefined && output === undefined) ||
      !viewsCompile
    ) {
      return undefined;
    }
    const fallback = contract.model_views.find((view) => view.family === "default");
    const viewFor = (family: ModelFamily): ModelFacingTool => {
      const view = contract.model_views.find((candidate) => candidate.family === family) ?? fallback;
      const schema = view?.input_schema ?? contract.input_schema;
      return {
        name: view?.name ?? defaultModelName(contract.name),
        description: view?.description ?? contract.description,
        // Mcp-Param-* headers are MCP's: the other families' models are not shown the keyword.
        input_schema: family === "mcp" ? schema : withoutMcpHeaders(schema),
      };
    };
    const views: Record<ModelFamily, ModelFacingTool> = {
      default: viewFor("default"),
      openai: viewFor("openai"),
      anthropic: viewFor("anthropic"),
      mcp: viewFor("mcp"),
    };
    return {
      contract: deepFreeze(contract),
      index,
      input,
      output,
      paths: paths.shape,
      views: deepFreeze(views),
      mcpHeaders: deepFreeze(mcpHeaders(views.mcp.input_schema).declarations),
    };
  }

  /**
   * Records the problems of the contract's `x-mcp-header` declarations (its input schema's and
   * its views', none in its output schema); true when there is one.
   */
  #checkMcpHeaders(contract: ToolContract, at: string, problems: FieldError[]): boolean {
    const schemas: Array<[Record<string, unknown> | undefined, string, boolean]> = [
      [contract.input_schema, `${at}/input_schema`, true],
      [contract.output_schema, `${at}/output_schema`, false],
      ...contract.model_views.map((view, index): [Record<string, unknown> | undefined, string, boolean] => [
        view.input_schema,
        `${at}/model_views/${index}/input_schema`,
        true,
      ]),
    ];
    let found = false;
    for (const [schema, where, allowed] of schemas) {
      for (const problem of schema === undefined ? [] : mcpHeaders(schema, allowed).problems) {
        problems.push({ path: `${where}${problem.pointer}`, message: problem.message });
        found = true;
      }
    }
    return found;
  }

  /** Where a model-facing name of `contract` for `family` is written in the config. */
  #namePointer(entry: CompiledContract, family: ModelFamily, base: string): string {
    const views = entry.contract.model_views;
    const own = views.findIndex((view) => view.family === family);
    const viewIndex = own >= 0 ? own : views.findIndex((view) => view.family === "default");
    return viewIndex >= 0
      ? `${base}/${entry.index}/model_views/${viewIndex}/name`
      : `${base}/${entry.index}/name`;
  }

  #indexModelNames(base: string, problems: FieldError[]): void {
    /** Collisions by pointer and cause, so that one name clashing in several families is one problem. */
    const collisions = new Map<
      string,
      { path: string; name: string; cause: string; families: ModelFamily[] }
    >();
    const collide = (entry: CompiledContract, family: ModelFamily, name: string, cause: string): void => {
      const path = this.#namePointer(entry, family, base);
      const key = JSON.stringify([path, name, cause]);
      const known = collisions.get(key);
      if (known === undefined) collisions.set(key, { path, name, cause, families: [family] });
      else known.families.push(family);
    };
    for (const family of modelFamilies) {
      const names = new Map<string, CompiledContract>();
      for (const entry of this.#byKey.values()) {
        const name = entry.views[family].name;
        const holder = names.get(name);
        const shadowed = this.#byCanonicalName.get(name)?.find((other) => other !== entry);
        if (holder !== undefined)
          collide(entry, family, name, `is already used by ${contractKey(holder.contract)}`);
        else if (shadowed !== undefined) {
          collide(entry, family, name, `is the canonical name of ${contractKey(shadowed.contract)}`);
        } else names.set(name, entry);
      }
      this.#byModelName.set(family, names);
    }
    for (const { path, name, cause, families } of collisions.values()) {
      problems.push({
        path,
        message: `the model-facing name "${name}" (${families.join(", ")}) ${cause}; declare a model view with another name`,
      });
    }
  }

  #entry(contract: ToolContract): CompiledContract {
    const entry = this.#byKey.get(contractKey(contract));
    if (entry === undefined) {
      throw new WritError("internal", `contract ${contractKey(contract)} is not in this registry`, {
        suggestedFix: "Use contracts obtained from this registry (resolve, get or list).",
      });
    }
    return entry;
  }

  /**
   * The contract a call from `source` names: the model-facing name of that source's family (a
   * family without its own view uses the default view), else the canonical `name@version`, else the
   * canonical `name` when only one version is registered.
   */
  resolve(toolName: string, source: ProposalSource): ToolContract | undefined {
    const byView = this.#byModelName.get(modelFamilyOf(source))?.get(toolName);
    if (byView !== undefined) return byView.contract;
    const direct = this.#byKey.get(toolName);
    if (direct !== undefined) return direct.contract;
    const versions = this.#byCanonicalName.get(toolName);
    return versions?.length === 1 ? versions[0]?.contract : undefined;
  }

  /** The contract with this canonical name and version. */
  get(name: string, version: string): ToolContract | undefined {
    return this.#byKey.get(contractKey({ name, version }))?.contract;
  }

  /** The registered versions of a canonical name, oldest first. */
  versionsOf(name: string): string[] {
    return (this.#byCanonicalName.get(name) ?? [])
      .map((entry) => entry.contract.version)
      .sort(compareVersions);
  }

  /** Every contract, by canonical name, then version. */
  list(): readonly ToolContract[] {
    return this.#ordered;
  }

  /** The model-facing names for `family`, sorted. */
  modelNames(family: ModelFamily): string[] {
    return [...(this.#byModelName.get(family)?.keys() ?? [])].sort();
  }

  /** What a model of `family` is shown for `contract`: name, description, input schema. */
  modelView(contract: ToolContract, family: ModelFamily): ModelFacingTool {
    return this.#entry(contract).views[family];
  }

  /** Where the contract's arguments hold paths to normalize; undefined when it declares none. */
  pathsOf(contract: ToolContract): PathShape | undefined {
    return this.#entry(contract).paths;
  }

  mcpHeadersOf(contract: ToolContract): readonly McpHeaderDeclaration[] {
    return this.#entry(contract).mcpHeaders;
  }

  /** How `args` fail the contract's input schema (empty when they match). */
  checkInput(contract: ToolContract, args: unknown): SchemaViolation[] {
    const validate = this.#entry(contract).input;
    return validate(args) ? [] : violationsOf(validate.errors ?? [], args);
  }

  /** How `result` fails the contract's output schema (empty when it matches or there is none). */
  checkOutput(contract: ToolContract, result: unknown): SchemaViolation[] {
    const validate = this.#entry(contract).output;
    if (validate === undefined || validate(result)) return [];
    return violationsOf(validate.errors ?? [], result);
  }
}

/**
 * The contracts in the raw `tools:` section of the config, with defaults applied. Throws
 * `WritError("invalid_argument")` with pointers under `pointer` (where the section is).
 */
export function parseToolContracts(raw: unknown, pointer = ""): ToolContract[] {
  const result = toolContractsSchema.safeParse(raw);
  if (result.success) return result.data;
  throw configError(problemsFromZod(result.error, raw, pointer));
}
