/**
 * `writ tools --as <token or claims> [--config <file>] [--family f] [--format text|json]`: the
 * tools a caller would see (`GET /v1/tools`, MCP `tools/list`) and why, from the configuration's
 * own policy and contracts, without a running gateway (`discovery-probe.ts`).
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, loadConfig } from "../config/index.ts";
import { modelFamilies } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";
import type { Subject } from "../core/types.ts";
import { ClaimsError } from "../identity/claims.ts";
import { PolicyLoadError } from "../policy/index.ts";
import { DiscoveryProbe, type ToolVisibility } from "./discovery-probe.ts";

export const toolsUsage = `usage: writ tools --as <token or claims> [--config <file>] [--family <f>] [--format text|json]

Shows which tools a caller would see in tool discovery (GET /v1/tools, MCP tools/list), and why:
the configuration's policy is asked about every contract as discovery asks it, with
context.phase "discover", no arguments and the tool's resource unknown.

options:
      --as <who>       a bearer JWT (verified as the gateway verifies it: its issuers, audience,
                       keys and expiry), or claims as JSON, unverified, mapped to a subject as
                       the issuer named by "iss" (else the development issuer) maps them:
                       '{"sub": "alice", "tnt": "demo", "roles": ["viewer"]}'
      --config <file>  the gateway's configuration (default: the embedded one, as writ serve)
      --family <f>     the model family asking (default, openai, anthropic, mcp): the
                       policy's input.context.source
      --format <f>     text (default) or json: each tool with shown, decision, reasons and
                       the input the policy was asked with
  -h, --help           show this text`;

const argsSchema = z.object({
  as: z.string({ error: "--as is required: a bearer JWT, or claims as JSON" }).min(1),
  config: z.string().optional(),
  family: z
    .enum(modelFamilies, { error: `--family is one of ${modelFamilies.join(", ")}` })
    .default("default"),
  format: z.enum(["text", "json"], { error: "--format is text or json" }).default("text"),
});

const claimsSchema = z.record(z.string(), z.unknown());

export async function toolsCommand(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        as: { type: "string" },
        config: { type: "string" },
        family: { type: "string" },
        format: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    return usageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) {
    console.log(toolsUsage);
    return 0;
  }
  const parsed = argsSchema.safeParse(values);
  if (!parsed.success) return usageError(parsed.error.issues.map((i) => i.message).join("; "));
  const args = parsed.data;
  try {
    const config = await loadConfig(args.config);
    const probe = await DiscoveryProbe.load(config);
    const subject = await subjectOf(probe, args.as);
    const seen = probe.see(subject, args.family);
    if (args.format === "json") {
      console.log(
        JSON.stringify(
          { subject: describe(subject), revision: probe.revision, tools: seen.map(asJson) },
          null,
          2,
        ),
      );
    } else {
      printText(subject, seen);
    }
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof PolicyLoadError || error instanceof ClaimsError) {
      console.error(`writ tools: ${error.message}`);
      return 1;
    }
    if (error instanceof WritError) {
      console.error(`writ tools: ${error.message}${error.suggestedFix ? ` (${error.suggestedFix})` : ""}`);
      return 1;
    }
    throw error;
  }
}

function usageError(message: string): number {
  console.error(`writ tools: ${message}\n\n${toolsUsage}`);
  return 2;
}

/** `--as`: claims when it reads as a JSON object, else a bearer JWT. */
async function subjectOf(probe: DiscoveryProbe, who: string): Promise<Subject> {
  const text = who.trim();
  if (!text.startsWith("{")) return probe.subjectOfToken(text.replace(/^Bearer\s+/i, ""));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ClaimsError(
      `--as is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const claims = claimsSchema.safeParse(json);
  if (!claims.success) throw new ClaimsError("--as claims must be a JSON object");
  return await probe.subjectOfClaims(claims.data);
}

function describe(subject: Subject) {
  return {
    id: subject.id,
    tenant: subject.tenant,
    roles: subject.roles,
    scopes: subject.scopes,
    issuer: subject.issuer,
  };
}

/** Why a tool is shown or hidden, in a line: the decision and its reasons, or the failure. */
function why(v: ToolVisibility): string {
  const { decision, failure } = v.outcome;
  if (failure !== undefined)
    return `the policy could not decide (${failure.code}: ${failure.message}): hidden, fail closed`;
  if (decision === undefined) return "";
  const reasons = decision.reasons.map((r) => `${r.code}${r.message ? `: ${r.message}` : ""}`);
  return `${decision.decision}${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`;
}

function asJson(v: ToolVisibility) {
  return {
    tool: v.contract.name,
    version: v.contract.version,
    shown: v.outcome.shown,
    ...(v.outcome.decision === undefined ? {} : { decision: v.outcome.decision }),
    ...(v.outcome.failure === undefined
      ? {}
      : { failure: { code: v.outcome.failure.code, message: v.outcome.failure.message } }),
    ...(v.contract.backend.kind === "mcp"
      ? { listed_while: `MCP server ${v.contract.backend.server} offers it` }
      : {}),
    input: v.outcome.input,
  };
}

function printText(subject: Subject, seen: readonly ToolVisibility[]): void {
  const shown = seen.filter((v) => v.outcome.shown).length;
  const roles = subject.roles.length > 0 ? subject.roles.join(",") : "none";
  console.log(
    `${subject.id} (tenant ${subject.tenant}, roles ${roles}, issuer ${subject.issuer}) sees ${shown} of ${seen.length} tools`,
  );
  const width = Math.max(4, ...seen.map((v) => `${v.contract.name}@${v.contract.version}`.length));
  for (const v of seen) {
    const name = `${v.contract.name}@${v.contract.version}`.padEnd(width);
    const mcp =
      v.contract.backend.kind === "mcp"
        ? ` [listed while MCP server ${v.contract.backend.server} offers it]`
        : "";
    console.log(`  ${v.outcome.shown ? "shown " : "hidden"}  ${name}  ${why(v)}${mcp}`);
  }
  const first = seen[0];
  if (shown === 0 && first !== undefined) {
    console.log(
      `\nEvery tool is hidden. Discovery asks the policy with context.phase "discover", no arguments and the resource unknown, e.g. for ${first.contract.name}:\n${JSON.stringify(discoveryView(first), null, 2)}\nA rule that needs the arguments or the resource's owner denies it there: decide the discover phase on its own (README, "From zero to your own tool").`,
    );
  }
}

/** The parts of a discovery input that explain it (not the time or request id). */
function discoveryView(v: ToolVisibility) {
  const { input } = v.outcome;
  return {
    action: { name: input.action.name, args: input.action.args },
    resource: input.resource,
    context: { phase: input.context.phase, source: input.context.source },
  };
}
