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
import { DEFAULT_SANDBOX_THREADS, type SandboxLimits, SandboxPool } from "./sandbox.ts";
import { type SdkTool, sdkDeclarations } from "./sdk.ts";

export { type CodeModeConfig, codeModeConfigSchema } from "./config.ts";
export { CODE_RUN_ACTION, RUN_CODE_TOOL } from "./contract.ts";
export type { LedgerEntry, RunAnswer, RunOutcome } from "./run.ts";
export { SandboxPool } from "./sandbox.ts";
export { type SdkTool, sdkDeclarations } from "./sdk.ts";

export interface RunCodeRequest {
  subject: Subject;
  code: string;
  session?: string;
  requestId: string;
  signal?: AbortSignal;
}

/** How long a caller at its cap is told to wait before running again (runs are short). */
const CAP_RETRY_AFTER_S = 1;

export class CodeMode {
  readonly #limits: Partial<SandboxLimits>;
  /** This gateway's sandbox threads (one run on each at a time). */
  readonly #pool: SandboxPool;
  /** Runs going on now, by caller (tenant and subject): each caller's are capped. */
  readonly #running = new Map<string, number>();

  constructor(
    private readonly gw: Gateway,
    private readonly discovery: Pick<ToolDiscovery, "list">,
    private readonly config: CodeModeConfig,
    /** The sandbox threads (default: a pool of `sandbox_threads` of its own). */
    pool?: SandboxPool,
  ) {
    this.#limits = limitsOf(config);
    this.#pool = pool ?? sandboxPool(config);
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
      pool: this.#pool,
      admit: () => this.#admit(req.subject),
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
  }

  /**
   * A slot among the caller's runs going on now (`code_mode.max_concurrent_runs`), released when
   * the run ends; `rate_limited` when the caller has that many already. Counted in this instance.
   */
  #admit(subject: Subject): (() => void) | WritError {
    const key = `${subject.tenant}\u0000${subject.id}`;
    const running = this.#running.get(key) ?? 0;
    const cap = this.config.max_concurrent_runs;
    if (running >= cap) {
      return new WritError(
        "rate_limited",
        `${subject.id} has ${running} programs running, the most one caller may run at once (code_mode.max_concurrent_runs: ${cap})`,
        {
          retryAfter: CAP_RETRY_AFTER_S,
          suggestedFix: "wait for a run to end (or stop one), then run this program again",
        },
      );
    }
    this.#running.set(key, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#running.get(key) ?? 1) - 1;
      if (left <= 0) this.#running.delete(key);
      else this.#running.set(key, left);
    };
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

/**
 * The sandbox threads `config` asks for (`sandbox_threads`, else one per core, at least 2): always
 * one more than a caller may use at once, so one caller's runs never hold every thread.
 */
export function sandboxPool(config: CodeModeConfig): SandboxPool {
  return new SandboxPool(
    config.sandbox_threads ?? Math.max(DEFAULT_SANDBOX_THREADS, config.max_concurrent_runs + 1),
  );
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
