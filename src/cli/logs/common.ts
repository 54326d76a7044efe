/**
 * What the `writ logs` commands share: their exit codes, the filter flags (the names of
 * `GET /v1/decisions`), opening the configured store through `openStore`, and reporting errors
 * with what to do next.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, type GatewayConfig, loadConfig } from "../../config/index.ts";
import { errorMessage, WritError } from "../../core/errors.ts";
import { DecisionLog } from "../../decisionlog/index.ts";
import { parseDecisionFilter } from "../../decisionlog/query.ts";
import { openStore } from "../../store/index.ts";
import type { DecisionFilter, Store } from "../../store/types.ts";
import type { CommandIo } from "./io.ts";

export const EXIT = {
  ok: 0,
  /** The answer is no: the chain is broken, the entry does not exist. */
  failed: 1,
  usage: 2,
  /** The configuration or the store cannot be read. */
  unreadable: 3,
} as const;

export const configOption = { config: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export const filterOptions = {
  subject: { type: "string" },
  tenant: { type: "string" },
  action: { type: "string" },
  decision: { type: "string" },
  reason: { type: "string" },
  resource: { type: "string" },
  "resource-type": { type: "string" },
  "resource-id": { type: "string" },
  path: { type: "string" },
  run: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
} as const;

export const filterHelp = `filters (all optional, combined with AND):
  --subject <id> --tenant <t> --action <name> --reason <code>
  --decision allow|deny|require_approval|allow_with_conditions|error
  --resource <type>/<id>  (or --resource-type <type> --resource-id <id>)
  --path <path>   the entry's policy path: writ/decision, writ/shadow (a shadow policy's disagreements), …
  --run <run-id>  a Code Mode run: its own entry and the entries of the calls its program made
  --since <time> --until <time>   ISO 8601, e.g. 2026-01-31 or 2026-01-31T12:00:00Z (until is exclusive)`;

/** A usage problem: printed with the usage, exit code 2. */
export class UsageError extends Error {}

type FlagOptions = NonNullable<ParseArgsConfig["options"]>;
type ParsedFlags<O extends FlagOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/**
 * Parses `argv` strictly: unknown flags, missing values and (unless `takesArguments`) positional
 * arguments are usage errors.
 */
export function parseFlags<O extends FlagOptions>(
  argv: string[],
  options: O,
  takesArguments = false,
): ParsedFlags<O> {
  let parsed: ParsedFlags<O>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
  if (!takesArguments && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  }
  return parsed;
}

/** The filter flags as the store's filter (`--resource type/id` splits at the first slash). */
export function filterOf(values: Record<string, unknown>): DecisionFilter {
  const resource = typeof values.resource === "string" ? values.resource : undefined;
  const slash = resource?.indexOf("/") ?? -1;
  const fields = {
    subject: values.subject,
    tenant: values.tenant,
    action: values.action,
    decision: values.decision,
    reason: values.reason,
    resource_type:
      resource === undefined ? values["resource-type"] : slash < 0 ? resource : resource.slice(0, slash),
    resource_id: resource === undefined || slash < 0 ? values["resource-id"] : resource.slice(slash + 1),
    path: values.path,
    run: values.run,
    since: values.since,
    until: values.until,
  };
  return parseDecisionFilter(fields, "the filter flags");
}

export interface OpenLog {
  store: Store;
  log: DecisionLog;
  config: GatewayConfig;
}

/** Opens the store named by `--config` (default: the embedded configuration), runs `work`, closes it. */
export async function withLog(configFile: string | undefined, work: (opened: OpenLog) => Promise<number>) {
  let store: Store;
  let config: GatewayConfig;
  try {
    config = await loadConfig(configFile);
    store = await openStore(config.store);
  } catch (error) {
    if (error instanceof ConfigError)
      throw new StoreUnavailable(error.message, "fix the file given to --config");
    throw new StoreUnavailable(
      `cannot open the decision log's store: ${errorMessage(error)}`,
      error instanceof WritError ? error.suggestedFix : "check the store section of the configuration",
    );
  }
  try {
    return await work({ store, log: new DecisionLog(store), config });
  } finally {
    await store.close();
  }
}

/** A command that reads the decision log through the filter flags, as `filteredLogCommand` runs it. */
export interface FilteredLogCommand<S extends z.ZodType> {
  usage: string;
  /** The command's own flags, besides `--config`, `--help` and the filters. */
  options: FlagOptions;
  /** Checks the command's own flags (the parsed values, as strings and booleans). */
  schema: S;
  /** The usage error when `schema` refuses the flags. */
  problem: string | ((values: Record<string, unknown>) => string);
}

/**
 * What every command that reads the decision log through the filter flags (`logs query`,
 * `tail`, `export`, `policy replay`) does around its own work: parses `--config`, the filters
 * and its own flags strictly, prints its usage for `--help`, checks its flags and the filter
 * (usage errors), then opens the store, runs `work` with them and closes the store.
 */
export async function filteredLogCommand<S extends z.ZodType>(
  argv: string[],
  io: CommandIo,
  command: FilteredLogCommand<S>,
  work: (opened: OpenLog & { filter: DecisionFilter; flags: z.output<S> }) => Promise<number>,
): Promise<number> {
  const options: FlagOptions = { ...configOption, ...filterOptions, ...command.options };
  const { values } = parseFlags(argv, options);
  if (values.help) {
    await io.out(command.usage);
    return EXIT.ok;
  }
  const flags = command.schema.safeParse(values);
  if (!flags.success) {
    throw new UsageError(typeof command.problem === "string" ? command.problem : command.problem(values));
  }
  const filter = filterOf(values);
  const config = typeof values.config === "string" ? values.config : undefined;
  return withLog(config, (opened) => work({ ...opened, filter, flags: flags.data }));
}

/** The configuration or store cannot be read (exit code 3). */
export class StoreUnavailable extends Error {
  readonly suggestedFix: string;
  constructor(message: string, suggestedFix: string) {
    super(message);
    this.suggestedFix = suggestedFix;
  }
}

/** Prints an error with what to do next and returns its exit code; anything unexpected is rethrown. */
export function reportError(io: CommandIo, command: string, usage: string, error: unknown): number {
  if (error instanceof UsageError) {
    io.err(`${command}: ${error.message}\n\n${usage}`);
    return EXIT.usage;
  }
  if (error instanceof StoreUnavailable) {
    io.err(`${command}: ${error.message}\n  next: ${error.suggestedFix}`);
    return EXIT.unreadable;
  }
  if (error instanceof WritError) {
    const fields = error.fieldErrors.map((f) => `\n  ${f.path}: ${f.message}`).join("");
    io.err(`${command}: ${error.message}${fields}\n  next: ${error.suggestedFix}`);
    return error.category === "invalid_argument" ? EXIT.usage : EXIT.unreadable;
  }
  throw error;
}

const oneDecisionSchema = z.object({
  format: z.enum(["text", "json"]).default("text"),
  id: z.string().min(1),
});

/**
 * The flags of a command about one decision (`show`, `explain`): `--config`, `--format text|json`
 * and the decision id. Prints `usage` for `--help` (then the exit code is returned instead).
 */
export async function oneDecisionFlags(
  argv: string[],
  io: CommandIo,
  usage: string,
): Promise<{ config: string | undefined; format: "text" | "json"; id: string } | number> {
  const { values, positionals } = parseFlags(argv, { ...configOption, format: { type: "string" } }, true);
  if (values.help) {
    await io.out(usage);
    return EXIT.ok;
  }
  const parsed = oneDecisionSchema.safeParse({ format: values.format, id: positionals[0] });
  if (!parsed.success || positionals.length !== 1) {
    throw new UsageError("give exactly one decision id (and --format text or json)");
  }
  return { config: values.config, ...parsed.data };
}
