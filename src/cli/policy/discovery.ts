/**
 * The warning `writ policy check` and `writ policy test` add when the policy they checked is the
 * one a configuration serves (`--config`, else `writ.yaml` in the current folder) and its
 * discovery phase denies every configured tool: then `GET /v1/tools` and MCP `tools/list` list
 * nothing, which no test of the policy's call decisions shows.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { loadConfig } from "../../config/index.ts";
import { errorMessage } from "../../core/errors.ts";
import type { Subject } from "../../core/types.ts";
import { DiscoveryProbe, type ToolVisibility } from "../discovery-probe.ts";
import { helpOption, v0Compatible } from "./args.ts";
import { builtinsOption, builtinsUsage } from "./builtins.ts";

const configUsage = `      --config <file>  the gateway configuration that serves this policy (default: writ.yaml in
                       the current folder, if any): warn when its tool discovery would show
                       no tool to anyone tried (its seeded resources' owners, else "user")`;

/**
 * The flags `writ policy check` and `writ policy test` end with: custom builtins, Rego v0, the
 * configuration whose tool discovery is checked (this warning) and help — for the command's
 * `parseArgs` options, the end of its usage text and its arguments' schema.
 */
export const policyCheckFlags = {
  options: {
    ...builtinsOption,
    ...v0Compatible.option,
    config: { type: "string" },
    ...helpOption,
  },
  usage: `${builtinsUsage}\n${v0Compatible.usage}\n${configUsage}\n  -h, --help           show this text`,
  schema: {
    builtins: z.array(z.string()).optional(),
    "v0-compatible": z.boolean().default(false),
    config: z.string().optional(),
  },
} as const;

/**
 * The warning, or nothing: no configuration found, the configuration serves another folder or a
 * bundle, it declares no tool, or some tool is shown to someone tried.
 */
export async function discoveryWarning(
  paths: readonly string[],
  configFile: string | undefined,
): Promise<string | undefined> {
  const file = configFile ?? (existsSync("writ.yaml") ? "writ.yaml" : undefined);
  if (file === undefined) return undefined;
  let seen: { subject: Subject; tools: ToolVisibility[] }[];
  try {
    const config = await loadConfig(file);
    if (config.policy.bundle !== undefined || config.tools.length === 0) return undefined;
    const served = path.resolve(config.policy.dir);
    const checked = paths.map((p) => path.resolve(p));
    if (!checked.some((p) => served === p || served.startsWith(`${p}${path.sep}`))) return undefined;
    const probe = await DiscoveryProbe.load(config);
    seen = subjectsToTry(config.seeds.resources).map((subject) => ({ subject, tools: probe.see(subject) }));
  } catch (error) {
    return `warning: could not work out what ${file}'s tool discovery shows: ${errorMessage(error)}`;
  }
  if (seen.some((s) => s.tools.some((t) => t.outcome.shown))) return undefined;
  const first = seen[0]?.tools[0];
  if (first === undefined) return undefined;
  const who = seen.map((s) => `${s.subject.id} (tenant ${s.subject.tenant})`).join(", ");
  const { input } = first.outcome;
  const shown = {
    action: { name: input.action.name, args: input.action.args },
    resource: input.resource,
    context: { phase: input.context.phase },
  };
  return [
    `warning: the policy hides every tool: with ${file}, tool discovery (GET /v1/tools, MCP tools/list) shows none of its ${seen[0]?.tools.length ?? 0} tools to ${who}.`,
    `  Discovery asks the policy with context.phase "discover", no arguments and the resource unknown, as here for ${first.contract.name}:`,
    `  ${JSON.stringify(shown)}`,
    `  ${first.contract.name}: ${first.outcome.failure ? `${first.outcome.failure.code}: ${first.outcome.failure.message}` : (first.outcome.decision?.reasons.map((r) => r.code).join(", ") ?? "")}`.trimEnd(),
    `  Decide the discover phase on its own (README, "From zero to your own tool"); see what a caller sees with: writ tools --as <token or claims> --config ${file}`,
  ].join("\n");
}

/**
 * The callers to try, with no roles or scopes: each seeded resource's owner in its tenant (at
 * most five), else a user of the tenant `writ token` mints for.
 */
function subjectsToTry(seeds: readonly { owner: string; tenant: string }[]): Subject[] {
  const subject = (id: string, tenant: string): Subject => ({
    id,
    tenant,
    roles: [],
    scopes: [],
    issuer: "writ policy check",
    claims: { sub: id },
  });
  const owners = new Map(seeds.map((s) => [`${s.tenant}/${s.owner}`, subject(s.owner, s.tenant)]));
  return owners.size > 0 ? [...owners.values()].slice(0, 5) : [subject("user", "demo")];
}
