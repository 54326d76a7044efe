/**
 * Code Mode (issue 18): a model sends a short program that calls tools; Writ shows it the
 * caller's tools as a typed SDK (sdk.ts), decides `code.run` (contract.ts), runs the program in
 * the WebAssembly sandbox (sandbox.ts) and puts every call it makes through the whole pipeline
 * (run.ts). The entrances — `POST /v1/run_code`, `GET /v1/run_code/sdk`, MCP `run_code` — hold
 * one `CodeMode` each gateway.
 */
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import type { Subject } from "../core/types.ts";
import { discoverable, type ToolDiscovery } from "../discovery/index.ts";
import type { CodeModeConfig } from "./config.ts";
import { codeRunContract } from "./contract.ts";
import { type RunAnswer, runCode } from "./run.ts";
import type { SandboxLimits } from "./sandbox.ts";
import { type SdkTool, sdkDeclarations } from "./sdk.ts";

export { type CodeModeConfig, codeModeConfigSchema } from "./config.ts";
export { CODE_RUN_ACTION, RUN_CODE_TOOL } from "./contract.ts";
export type { LedgerEntry, RunAnswer, RunOutcome } from "./run.ts";
export { type SdkTool, sdkDeclarations } from "./sdk.ts";

export interface RunCodeRequest {
  subject: Subject;
  code: string;
  session?: string;
  requestId: string;
  signal?: AbortSignal;
}

export class CodeMode {
  readonly #limits: Partial<SandboxLimits>;

  constructor(
    private readonly gw: Gateway,
    private readonly discovery: Pick<ToolDiscovery, "list">,
    private readonly config: CodeModeConfig,
  ) {
    this.#limits = limitsOf(config);
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /** Whether `subject` is offered `run_code`: Code Mode is on and the discovery policy shows `code.run`. */
  offered(subject: Subject, family: "default" | "mcp" = "default"): boolean {
    return this.config.enabled && discoverable(this.gw, subject, codeRunContract, family);
  }

  /** The tools a program of `subject` may call: what discovery shows, with their output schemas. */
  tools(subject: Subject): SdkTool[] {
    return this.discovery.list(subject, "default").map((tool) => {
      const output = this.gw.contracts.get(tool.contract.name, tool.contract.version)?.output_schema;
      return {
        name: tool.name,
        description: tool.description,
        input_schema: tool.input_schema,
        ...(output === undefined ? {} : { output_schema: output }),
        contract: tool.contract,
      };
    });
  }

  /** The SDK's declarations for `subject`. */
  sdk(subject: Subject): string {
    return sdkDeclarations(this.tools(subject));
  }

  /** Runs a program for `req.subject` (refused with `not_found` while Code Mode is off). */
  async run(req: RunCodeRequest): Promise<RunAnswer> {
    this.checkEnabled();
    const bytes = Buffer.byteLength(req.code, "utf8");
    if (bytes > this.config.max_code_bytes) {
      throw new WritError(
        "invalid_argument",
        `the program is ${bytes} bytes, more than the ${this.config.max_code_bytes} a run takes`,
        {
          fieldErrors: [{ path: "/code", message: `must be at most ${this.config.max_code_bytes} bytes` }],
          suggestedFix: "send a shorter program: call the tools and return what is needed, nothing more",
        },
      );
    }
    return runCode(this.gw, {
      subject: req.subject,
      code: req.code,
      ...(req.session === undefined ? {} : { session: req.session }),
      requestId: req.requestId,
      tools: this.tools(req.subject).map((tool) => tool.name),
      limits: this.#limits,
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
  }

  /** Throws `not_found` while Code Mode is off. */
  checkEnabled(): void {
    if (!this.config.enabled) {
      throw new WritError("not_found", "Code Mode is off on this gateway", {
        suggestedFix: "propose tool calls one by one, or ask the operator to set code_mode.enabled",
      });
    }
  }
}

/** The config's name of each sandbox limit. */
const LIMIT_NAMES = [
  ["memory_bytes", "memoryBytes"],
  ["stack_bytes", "stackBytes"],
  ["cpu_ms", "cpuMs"],
  ["duration_ms", "durationMs"],
  ["max_calls", "maxCalls"],
  ["max_concurrent_calls", "maxConcurrentCalls"],
  ["max_result_bytes", "maxResultBytes"],
  ["max_log_bytes", "maxLogBytes"],
] as const satisfies readonly (readonly [keyof CodeModeConfig, keyof SandboxLimits])[];

/** The sandbox's limits the config sets (the rest keep the sandbox's defaults). */
function limitsOf(config: CodeModeConfig): Partial<SandboxLimits> {
  const limits: Partial<SandboxLimits> = {};
  for (const [from, to] of LIMIT_NAMES) {
    const value = config[from];
    if (value !== undefined) limits[to] = value;
  }
  return limits;
}
