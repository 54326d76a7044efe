/**
 * `writ contracts import`: contracts from an MCP server's own lists. Connects as a client (a
 * stdio command or a Streamable HTTP URL), reads tools/list (and resources, resource templates,
 * prompts) and prints the contract YAML, or writes it to a folder; with `--check`, compares
 * written contracts with what the server lists now and reports the drift (exit 1), for CI.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  contractDrift,
  type Drift,
  type ImportedContract,
  importContracts,
  importedYaml,
} from "../contracts/import/index.ts";
import { WritError } from "../core/errors.ts";
import type { McpServerConfig } from "../dispatch/mcp/config.ts";
import { parseCommandLine } from "./contracts/command-line.ts";
import { readContracts } from "./contracts/existing.ts";

export const contractsUsage = `usage: writ contracts import (--stdio "<command line>" | --url <url> [--header "Name: value"]...)
                            [--name <server>] [--out <dir> | --check <file|dir>] [--timeout <ms>]

Connects to an MCP server as a client, reads its tools/list (and resources/list,
resources/templates/list and prompts/list) and prints contract YAML for Writ: the mcp.servers
entry and one contract per tool, resource and prompt, with the server's input and output schemas
as they are, its titles and descriptions, and the server's own tool names shown to models.

side_effect and idempotency come from each tool's annotations: readOnlyHint -> side_effect none,
destructiveHint -> committing, idempotentHint -> idempotency natural (openWorldHint is noted).
Those are the server's claims about itself, not facts about its effects: the YAML marks every
field taken from one. Review them before you serve the contracts; a policy must never trust them.

  --stdio "<command line>"  start the server as a child, MCP over its stdin/stdout (NAME=value
                            words before the program set its environment; no shell runs it)
  --url <url>               the server's Streamable HTTP endpoint
  --header "Name: value"    a header sent to --url (repeatable), e.g. the server's own
                            authorization; never written to the output
  --name <server>           the server's name under mcp.servers, which backends and canonical
                            names use (default: from the server's serverInfo name)
  --out <dir>               write <dir>/<server>.yaml instead of printing
  --check <file|dir>        compare the contracts of --name in a YAML file (a Writ configuration
                            or an import's output) or a folder of them with the server's lists now
  --timeout <ms>            how long the server may take to start and answer (default 30000)

exit status: 0 the YAML printed or written, or no drift; 1 drift: a tool, resource or prompt
added or removed, or a schema changed (each listed with the JSON Pointer of the difference);
2 a usage error, or the server could not be started, reached or read (the error says what to do).`;

type Values = {
  stdio?: string | undefined;
  url?: string | undefined;
  header?: string[] | undefined;
  name?: string | undefined;
  out?: string | undefined;
  check?: string | undefined;
  timeout?: string | undefined;
  help?: boolean | undefined;
};

function usageError(message: string): WritError {
  return new WritError("invalid_argument", message, { suggestedFix: "see writ contracts import --help" });
}

/** `--header "Name: value"` as a header, refusing what fetch would refuse. */
function headersOf(given: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const header of given) {
    const colon = header.indexOf(":");
    const name = header.slice(0, colon).trim();
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw usageError(`--header ${JSON.stringify(header)} is not "Name: value"`);
    }
    headers[name] = header.slice(colon + 1).trim();
  }
  return headers;
}

/** A server name mcp.servers accepts, from the server's own name (`memory-server` → `memory`). */
function serverNameFrom(info: string): string {
  const cleaned = info
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, "-")
    .replace(/^(@[^/]*\/)?(mcp-server-|server-|mcp-)/, "")
    .replace(/(-mcp-server|-server|-mcp)$/, "")
    .replace(/^[-.]+|[-.]+$/g, "");
  return cleaned === "" ? "upstream" : cleaned;
}

interface Target {
  /** The server as the import reaches it (the name filled in once known). */
  config: (name: string) => McpServerConfig;
  /** The mcp.servers entry written to the output (no secret: no headers, no environment values). */
  entry: (name: string) => Record<string, unknown>;
  origin: string;
  /** What the heading says about what was left out of the entry. */
  omitted: string[];
}

function targetOf(values: Values): Target {
  if ((values.stdio === undefined) === (values.url === undefined)) {
    throw usageError('name the server with exactly one of --stdio "<command line>" or --url <url>');
  }
  if (values.stdio !== undefined) {
    if (values.header !== undefined)
      throw usageError("--header goes with --url; a stdio server takes NAME=value words in --stdio");
    const { command, args, env } = parseCommandLine(values.stdio);
    const names = Object.keys(env);
    return {
      config: (name) => ({
        name,
        transport: "stdio",
        command,
        args,
        env,
        cwd: process.cwd(),
        protocol_version: "auto",
      }),
      entry: (name) => ({ name, transport: "stdio", command, args }),
      origin: [command, ...args].join(" "),
      omitted:
        names.length === 0
          ? []
          : [
              `the environment given (${names.join(", ")}) is not written: add what the server needs under env:`,
            ],
    };
  }
  const url = values.url ?? "";
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url))
    throw usageError(`--url ${JSON.stringify(url)} is not an http or https URL`);
  const headers = headersOf(values.header ?? []);
  return {
    config: (name) => ({ name, transport: "http", url, protocol_version: "auto" }),
    entry: (name) => ({ name, transport: "http", url }),
    origin: url,
    omitted:
      Object.keys(headers).length === 0
        ? []
        : [
            "the headers given are not written: put the server's credentials under credentials: and name them with credentials_ref",
          ],
  };
}

export async function contractsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    (sub === undefined ? console.error : console.log)(contractsUsage);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "import") {
    console.error(`writ contracts: unknown command ${JSON.stringify(sub)}\n\n${contractsUsage}`);
    return 2;
  }
  let values: Values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        stdio: { type: "string" },
        url: { type: "string" },
        header: { type: "string", multiple: true },
        name: { type: "string" },
        out: { type: "string" },
        check: { type: "string" },
        timeout: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    console.error(
      `writ contracts import: ${error instanceof Error ? error.message : String(error)}\n\n${contractsUsage}`,
    );
    return 2;
  }
  if (values.help) {
    console.log(contractsUsage);
    return 0;
  }
  try {
    return await importCommand(values);
  } catch (error) {
    if (!(error instanceof WritError)) throw error;
    console.error(`writ contracts import: ${error.message}\n  what to do: ${error.suggestedFix}`);
    return 2;
  }
}

async function importCommand(values: Values): Promise<number> {
  if (values.out !== undefined && values.check !== undefined)
    throw usageError("give --out or --check, not both");
  const timeoutMs = values.timeout === undefined ? 30_000 : Number(values.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    throw usageError(`--timeout ${JSON.stringify(values.timeout)} is not a number of milliseconds`);
  if (values.name !== undefined && !/^[A-Za-z0-9_.-]+$/.test(values.name)) {
    throw usageError(
      `--name ${JSON.stringify(values.name)}: a server name is letters, digits, "_", "." or "-"`,
    );
  }
  const target = targetOf(values);
  // Read the contracts first: a bad --check path fails before a server is started.
  const existing = values.check === undefined ? undefined : await readContracts(values.check);
  const { readServerCatalog } = await import("../dispatch/mcp/catalog.ts");
  const catalog = await readServerCatalog(target.config(values.name ?? "upstream"), {
    timeoutMs,
    ...(values.url === undefined ? {} : { headers: headersOf(values.header ?? []) }),
  });
  const server = values.name ?? serverNameFrom(catalog.info.name);
  const described = `the MCP server ${JSON.stringify(server)}${catalog.info.name === "" ? "" : ` (${catalog.info.name} ${catalog.info.version})`.trimEnd()}`;
  if (existing !== undefined) return check(existing, values.check ?? "", server, described, catalog);
  const imported = importContracts(catalog, { server, trustHints: true });
  const yaml = importedYaml({
    server,
    entry: target.entry(server),
    origin: target.origin,
    info: catalog.info,
    imported,
  });
  const text =
    target.omitted.length === 0 ? yaml : `${target.omitted.map((line) => `# ${line}`).join("\n")}\n${yaml}`;
  if (values.out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  const file = path.join(values.out, `${server}.yaml`);
  await mkdir(values.out, { recursive: true });
  await writeFile(file, text);
  console.log(`wrote ${summary(imported)} of ${described} to ${file}`);
  return 0;
}

function summary(imported: readonly ImportedContract[]): string {
  const count = (kinds: string[]) => imported.filter((item) => kinds.includes(item.source.kind)).length;
  return `${imported.length} contracts (${count(["tool"])} tools, ${count(["resource", "template"])} resources, ${count(["prompt"])} prompts)`;
}

function check(
  existing: Parameters<typeof contractDrift>[0],
  where: string,
  server: string,
  described: string,
  catalog: Parameters<typeof contractDrift>[2],
): number {
  const own = existing.filter(
    (contract) => "server" in contract.backend && contract.backend.server === server,
  );
  if (own.length === 0) {
    const servers = [...new Set(existing.flatMap((c) => ("server" in c.backend ? [c.backend.server] : [])))];
    throw new WritError(
      "invalid_argument",
      `no contract in ${where} names the MCP server ${JSON.stringify(server)}`,
      {
        suggestedFix:
          servers.length === 0
            ? "check the path: it holds no contract with an mcp, mcp_resource or mcp_prompt backend"
            : `give the name those contracts use with --name (${servers.map((s) => JSON.stringify(s)).join(", ")})`,
      },
    );
  }
  const drift = contractDrift(own, server, catalog);
  if (drift.length === 0) {
    console.log(
      `no drift: the ${own.length} contracts in ${where} match ${described} (${catalog.tools.length} tools, ${catalog.resources.length + catalog.templates.length} resources, ${catalog.prompts.length} prompts)`,
    );
    return 0;
  }
  console.log(`drift between ${where} and ${described}:`);
  for (const item of drift) console.log(driftLines(item).join("\n"));
  const counted = (change: Drift["change"]) => drift.filter((item) => item.change === change).length;
  console.log(
    `${drift.length} differences: ${counted("added")} added, ${counted("removed")} removed, ${counted("changed")} changed`,
  );
  return 1;
}

function driftLines(item: Drift): string[] {
  const what = `${item.kind} ${JSON.stringify(item.name)}`;
  switch (item.change) {
    case "added":
      return [
        `  added    ${what}: the server lists it and no contract governs it (writ contracts import prints one)`,
      ];
    case "removed":
      return [`  removed  ${what} (contract ${item.contract}): the server no longer lists it`];
    case "changed":
      return [
        `  changed  ${what} (contract ${item.contract}):`,
        ...item.differences.map(
          (difference) =>
            `             ${difference.field}${difference.pointer === "" ? "" : ` ${difference.pointer}`}: ${difference.detail ?? `${difference.change} by the server`}`,
        ),
      ];
  }
}
