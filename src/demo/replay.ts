/**
 * `writ demo [--url http://127.0.0.1:8080] [--config file]` (`npm run demo`): replays the seed
 * chapter's repair against a running gateway, and each refusal the sample policy makes, printing
 * every decision; the fix itself is proposed by a Code Mode program (code-mode.ts). Tokens come from the development issuer of the configuration, as with
 * `writ token`.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, loadConfig } from "../config/index.ts";
import { DevIssuer } from "../identity/index.ts";
import { runDemoProgram } from "./code-mode.ts";
import { startPaymentsService } from "./payments.ts";
import { contentHash, DEMO_FILES } from "./repository.ts";

const approvalAnswerSchema = z.object({ grant: z.object({ token: z.string() }) });
const executeAnswerSchema = z.object({
  result: z.object({ summary: z.string(), structured_content: z.record(z.string(), z.unknown()) }),
});

const outcomeSchema = z.object({
  call_id: z.string(),
  tool: z.string(),
  decision: z.string(),
  reasons: z.array(z.object({ code: z.string(), message: z.string() })),
  decision_id: z.string(),
  approval: z.object({ id: z.string() }).optional(),
  grant: z.object({ jti: z.string(), expires_at: z.string() }).optional(),
  error: z.object({ category: z.string(), message: z.string() }).optional(),
  result: z.object({ summary: z.string(), structured_content: z.record(z.string(), z.unknown()) }).optional(),
});
const answerSchema = z.object({ results: z.array(outcomeSchema) });
const resourceSchema = z.object({
  owner: z.string(),
  tenant: z.string(),
  attributes: z.record(z.string(), z.unknown()),
});
type Outcome = z.infer<typeof outcomeSchema>;

interface Step {
  title: string;
  as: string;
  format: string;
  payload: unknown;
}

/** A step whose one call is an OpenAI chat tool call `id` of `name` with `args`. */
function openaiStep(
  title: string,
  as: string,
  id: string,
  name: string,
  args: Record<string, unknown>,
): Step {
  const payload = { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
  return { title, as, format: "openai-chat", payload };
}

function anthropicCall(id: string, name: string, input: Record<string, unknown>) {
  return { role: "assistant", content: [{ type: "tool_use", id, name, input }] };
}

const usage = `usage: writ demo [--url <gateway url>] [--config <file>]

Replays the seed chapter's repair against a running gateway (start one with \`npm start\`), and
each refusal the sample policy makes, printing every decision. Tokens come from the development
issuer of the configuration, as with \`writ token\`.

options:
  --url <url>       the gateway (default: http://127.0.0.1:$PORT, else the configured port)
  --config <file>   the gateway's configuration (default: the embedded one)
  -h, --help        show this text`;

export async function demoCommand(argv: string[]): Promise<number> {
  const options = await readOptions(argv);
  if (typeof options === "number") return options;
  const { url, config } = options;
  const tokens = await demoTokens(config);
  if (tokens === undefined) return 1;
  if (!(await gatewayAnswers(url))) return 1;
  const demo = demoRun(url, tokens);
  const tools = await fetch(`${url}/v1/tools?family=openai`, {
    headers: { authorization: `Bearer ${tokens.alice}` },
  });
  console.log(`== tools alice may use: ${JSON.stringify(await tools.json())}`);
  const edit = await readRound(demo);
  await refusalRound(demo, edit);
  // Code Mode: one program searches, reads both files at once and proposes the fix; its read of
  // .env is refused inside the run, which ends there (every call decided and logged on its own).
  await runDemoProgram(
    url,
    tokens.alice ?? "",
    demo.numbered(
      "propose the fix in one Code Mode program (search, two reads in parallel, the edit, a refused .env read)",
    ),
  );
  await afterFixRound(demo, edit);
  await paymentsRound(url, config, tokens, demo.propose, demo.numbered);
  await demo.propose({
    title: demo.numbered("finish"),
    as: "alice",
    format: "canonical",
    payload: {
      tool: "repo.finish",
      arguments: { workspace: WORKSPACE, summary: "sum now adds: proposed `a + b` for src/sum.ts" },
    },
  });
  return 0;
}

type DemoConfig = Awaited<ReturnType<typeof loadConfig>>;

/** The gateway's URL and configuration from the command line, or the exit code of a usage error. */
async function readOptions(argv: string[]): Promise<{ url: string; config: DemoConfig } | number> {
  let values: { url?: string | undefined; config?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { url: { type: "string" }, config: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    console.error(`writ demo: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  let config: DemoConfig;
  try {
    config = await loadConfig(values.config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`writ demo: ${error.message}`);
    return 1;
  }
  const url = gatewayUrl(values.url, process.env.PORT, config.server.port);
  if (url instanceof Error) {
    console.error(`writ demo: ${url.message}\n\n${usage}`);
    return 2;
  }
  return { url, config };
}

const PAY_SCOPES = ["payments:write", "payments:commit"];
/** The demo's callers' tokens from the development issuer (undefined, said why, when it is off). */
async function demoTokens(config: DemoConfig): Promise<Record<string, string> | undefined> {
  const dev = config.identity.dev_issuer;
  if (!dev.enabled) {
    console.error("writ demo: the configuration does not enable the development issuer");
    return undefined;
  }
  const issuer = await DevIssuer.create({
    keyFile: dev.key_file,
    issuer: dev.issuer,
    audience: dev.audience,
  });
  return {
    // alice's agent holds the payment scopes the sample policy asks of a commit (step-up).
    alice: await issuer.mint({ sub: "alice", tenant: "demo", roles: ["developer"], scopes: PAY_SCOPES }),
    bob: await issuer.mint({ sub: "bob", tenant: "demo", roles: ["developer"] }),
    ops: await issuer.mint({ sub: "ops", tenant: "demo", roles: ["admin"] }),
    tess: await issuer.mint({ sub: "tess", tenant: "demo", roles: ["treasurer"] }),
  };
}

/** Whether a gateway answers at `url` (if not, says how to start one). */
async function gatewayAnswers(url: string): Promise<boolean> {
  try {
    const health = await fetch(`${url}/healthz`);
    if (!health.ok) throw new Error(`healthz answered ${health.status}`);
    return true;
  } catch (error) {
    console.error(
      `writ demo: no gateway at ${url} (${error instanceof Error ? error.message : String(error)}); start one with \`npm start\`, or point the demo at yours: \`PORT=<port> npm run demo\` or \`npm run demo -- --url <url>\``,
    );
    return false;
  }
}

const WORKSPACE = "ws-demo";

/** What every round of the demo uses: the gateway, the callers' tokens, proposing and numbering. */
interface DemoRun {
  url: string;
  tokens: Record<string, string>;
  /** Proposes a step's calls (executed) and prints every decision. */
  propose(step: Step): Promise<Outcome[]>;
  /** Steps of the repair are numbered in the order they run; refusals are not. */
  numbered(title: string): string;
}

function demoRun(url: string, tokens: Record<string, string>): DemoRun {
  let stepCount = 0;
  const propose = async (step: Step): Promise<Outcome[]> => {
    const response = await fetch(`${url}/v1/proposals`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tokens[step.as]}` },
      body: JSON.stringify({ format: step.format, payload: step.payload, execute: true, session: "demo" }),
    });
    const body: unknown = await response.json();
    const parsed = answerSchema.safeParse(body);
    console.log(`\n== ${step.title}  (${step.as}, ${step.format})`);
    if (!parsed.success) {
      console.log(`   HTTP ${response.status}: ${JSON.stringify(body)}`);
      return [];
    }
    for (const r of parsed.data.results) printOutcome(r);
    return parsed.data.results;
  };
  return { url, tokens, propose, numbered: (title) => `${++stepCount}. ${title}` };
}

function printOutcome(r: Outcome): void {
  const reasons = r.reasons.map((x) => `${x.code}: ${x.message}`).join("; ");
  console.log(`   ${r.tool} -> ${r.decision}${reasons ? ` (${reasons})` : ""}  [decision ${r.decision_id}]`);
  if (r.grant) console.log(`   grant ${r.grant.jti}, expires ${r.grant.expires_at}`);
  if (r.error && r.decision !== "deny") console.log(`   error ${r.error.category}: ${r.error.message}`);
  if (r.result) console.log(`   result: ${r.result.summary}`);
}

type Edit = { workspace: string; path: string; base_hash: string; before: string; after: string };

/** alice searches and reads; the edit she will propose is based on the hash she read. */
async function readRound({ propose, numbered }: DemoRun): Promise<Edit> {
  const ws = WORKSPACE;
  await propose(
    openaiStep(numbered("search for sum"), "alice", "call_1", "repo_search", { workspace: ws, query: "sum" }),
  );
  await propose({
    title: numbered("read the README"),
    as: "alice",
    format: "anthropic",
    payload: anthropicCall("toolu_2", "repo_read", { workspace: ws, path: "README.md" }),
  });
  const read = await propose(
    openaiStep(numbered("read src/sum.ts"), "alice", "call_3", "repo_read", {
      workspace: ws,
      path: "src/sum.ts",
    }),
  );
  const hash = read[0]?.result?.structured_content.hash;
  const baseHash = typeof hash === "string" ? hash : contentHash(DEMO_FILES["src/sum.ts"] ?? "");
  return { workspace: ws, path: "src/sum.ts", base_hash: baseHash, before: "a - b", after: "a + b" };
}

/** The refusals before the fix: paths outside the policy's, a hash never read, a stale hash. */
async function refusalRound(demo: DemoRun, edit: Edit): Promise<void> {
  const { propose } = demo;
  await propose(
    openaiStep("refusal: read .env (outside the readable paths)", "alice", "call_4", "repo_read", {
      workspace: WORKSPACE,
      path: ".env",
    }),
  );
  await propose(
    openaiStep(
      "refusal: edit README.md (outside the editable paths)",
      "alice",
      "call_5",
      "repo_propose_edit",
      {
        ...edit,
        path: "README.md",
        before: "sum",
        after: "difference",
      },
    ),
  );
  await propose(
    openaiStep(
      "refusal: edit with a base hash this workspace never read",
      "alice",
      "call_6",
      "repo_propose_edit",
      { ...edit, base_hash: "0".repeat(64) },
    ),
  );
  // Someone changes src/sum.ts outside the model's session: the repository reports the new hash
  // through the admin API (as a trusted operator would), so the hash alice read is stale.
  const workspace = adminResource(demo, `/v1/resources/workspace/${WORKSPACE}`);
  const current = await workspace.read();
  const files = z.record(z.string(), z.string()).parse(current.attributes.files ?? {});
  const changed = { ...files, "src/sum.ts": contentHash("export const sum = (a, b) => b - a;\n") };
  await workspace.write(current, { ...current.attributes, files: changed });
  await propose(
    openaiStep(
      "refusal: edit a file that changed since it was read",
      "alice",
      "call_6b",
      "repo_propose_edit",
      edit,
    ),
  );
  const after = await workspace.read();
  await workspace.write(after, { ...after.attributes, files });
  console.log("\n   (the operator restores the file)");
}

/** A resource read and written through the admin API, as the operator `ops`. */
function adminResource({ url, tokens }: DemoRun, route: string) {
  const headers = { "content-type": "application/json", authorization: `Bearer ${tokens.ops}` };
  return {
    read: async () => resourceSchema.parse(await (await fetch(`${url}${route}`, { headers })).json()),
    write: async (was: z.infer<typeof resourceSchema>, attributes: Record<string, unknown>) => {
      await fetch(`${url}${route}`, {
        method: "PUT",
        headers,
        body: JSON.stringify({ owner: was.owner, tenant: was.tenant, attributes }),
      });
    },
  };
}

/** The refusals after the fix was proposed: a second proposal, another caller, an ungoverned tool. */
async function afterFixRound({ propose }: DemoRun, edit: Edit): Promise<void> {
  await propose(
    openaiStep("refusal: a second proposal for the same file", "alice", "call_8", "repo_propose_edit", edit),
  );
  await propose(
    openaiStep("refusal: bob reads alice's workspace by its id", "bob", "call_9", "repo_read", {
      workspace: WORKSPACE,
      path: "README.md",
    }),
  );
  await propose(
    openaiStep("refusal: a tool that is not governed (shell)", "alice", "call_10", "shell", {
      cmd: "cat .env",
    }),
  );
}

/**
 * The payments service as an HTTP backend: a conditional grant (drafts capped for anyone but a
 * treasurer, enforced before the backend sees the call) and an approval round trip (a treasurer
 * approves the commit; the requester executes it with the grant Writ releases).
 */
async function paymentsRound(
  url: string,
  config: DemoConfig,
  tokens: Record<string, string>,
  propose: (step: Step) => Promise<Outcome[]>,
  numbered: (title: string) => string,
): Promise<void> {
  const source = config.credentials.payments;
  const tool = config.tools.find((t) => t.name === "create_payment_draft");
  if (source?.from !== "file" || tool?.backend.kind !== "http") {
    console.log("\n(the configuration has no payments tools: skipping the payments round)");
    return;
  }
  const token = randomBytes(24).toString("base64url");
  await mkdir(path.dirname(source.path), { recursive: true });
  await writeFile(source.path, token, { mode: 0o600 });
  const service = await startPaymentsService({
    jwksUrl: `${url}/.well-known/jwks.json`,
    issuer: config.grants.issuer,
    credentialToken: token,
    port: Number(new URL(tool.backend.url).port),
  });
  try {
    const draft = (amount: number, title: string) =>
      propose({
        title,
        as: "alice",
        format: "canonical",
        payload: {
          tool: "create_payment_draft",
          arguments: { account: "acct-alice", amount, currency: "EUR" },
        },
      });
    const [created] = await draft(
      40,
      numbered("a payment draft of 40 EUR (a conditional grant: at most 100)"),
    );
    await draft(500, "refusal: a draft of 500 EUR, over the grant's max_value (the backend never sees it)");
    const draftId = created?.result?.structured_content.draft_id;
    if (typeof draftId !== "string") return;
    const [asked] = await propose({
      title: numbered("commit the draft (committing: needs a treasurer)"),
      as: "alice",
      format: "canonical",
      payload: { tool: "commit_payment", arguments: { draft: draftId } },
    });
    const approvalId = asked?.approval?.id;
    if (!approvalId) return;
    const approved = await fetch(`${url}/v1/approvals/${approvalId}/approve`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tokens.tess}` },
      body: JSON.stringify({ reason: "invoice 2026-114 checked" }),
    });
    console.log(`\n== ${numbered(`tess (treasurer) approves ${approvalId}`)}: HTTP ${approved.status}`);
    // alice collects the grant: it is minted now and lives its TTL from now.
    const collected = await fetch(`${url}/v1/approvals/${approvalId}`, {
      headers: { authorization: `Bearer ${tokens.alice}` },
    });
    const grant = approvalAnswerSchema.safeParse(await collected.json());
    console.log(`   alice collects the released grant: HTTP ${collected.status}`);
    if (!grant.success) return;
    const executed = await fetch(`${url}/v1/execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tokens.alice}` },
      body: JSON.stringify({
        grant: grant.data.grant.token,
        tool: "commit_payment",
        arguments: { draft: draftId },
      }),
    });
    const body = executeAnswerSchema.safeParse(await executed.json());
    console.log(
      `\n== ${numbered("alice executes the commit with the released grant")}: HTTP ${executed.status}`,
    );
    if (body.success)
      console.log(
        `   result: ${body.data.result.summary} ${JSON.stringify(body.data.result.structured_content)}`,
      );
    console.log(`   the payments service accepted ${JSON.stringify(service.calls().accepted)}`);
  } finally {
    await service.close();
  }
}

/** The gateway's URL: --url as given (http or https), else 127.0.0.1 on PORT or the configured port. */
export function gatewayUrl(
  url: string | undefined,
  portText: string | undefined,
  configured: number,
): string | Error {
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return new Error(`--url must be a URL such as http://127.0.0.1:8080, not ${JSON.stringify(url)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      return new Error(`--url must be an http or https URL, not ${JSON.stringify(url)}`);
    }
    return parsed.origin + parsed.pathname.replace(/\/+$/, "");
  }
  if (portText === undefined || portText === "") return `http://127.0.0.1:${configured}`;
  const port = Number(portText);
  if (!(Number.isInteger(port) && port > 0 && port <= 65535)) {
    return new Error(`PORT must be a port number from 1 to 65535, not ${JSON.stringify(portText)}`);
  }
  return `http://127.0.0.1:${port}`;
}
