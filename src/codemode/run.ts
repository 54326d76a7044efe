/**
 * One Code Mode run: the policy decides `code.run` for the caller (its own decision-log entry),
 * then the program runs in the sandbox, and every tool call it makes re-enters the whole pipeline
 * (`handleProposal` with `execute`, the canonical format, the same subject, `input.context.run`
 * naming the run). Nothing the run was allowed carries over to its calls: each is decided, and
 * needs its own approval, on its own.
 *
 * A call the policy refuses (deny, or a call that does not normalize) or that needs approval ends
 * the run at once; a call that was allowed but failed (the tool's error, a conflict) is thrown
 * into the program, which may catch it. The outcome is layered like a result: the return value
 * (size-limited by the sandbox, secrets masked as in results), the ledger of calls, the console
 * lines, and for a run that did not return, a WritError naming the call that failed and whether
 * anything was committed before it.
 */
import { randomUUID } from "node:crypto";
import { jsonDigest } from "../core/digest.ts";
import { WritError, type WritErrorBody } from "../core/errors.ts";
import type { ApprovalView, CallOutcome, Gateway } from "../core/gateway.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import { isRecord } from "../core/json.ts";
import type { RunLink, Subject } from "../core/types.ts";
import { allows, denial, type Evaluation, overrule, visible } from "../pipeline/05-decide.ts";
import { decideAndLog, handleProposal } from "../pipeline/index.ts";
import { effectAfterRun, type LayeredResult, maskSecrets } from "../results/index.ts";
import { codeRunAction } from "./contract.ts";
import {
  type LateCall,
  type ProgramOutcome,
  runProgram,
  type SandboxLimits,
  type SandboxPool,
  StopRun,
} from "./sandbox.ts";

/** One tool call a program made, as the outcome lists it. */
export interface LedgerEntry {
  index: number;
  /** The model-facing name the program called. */
  tool: string;
  /** SHA-256 of the canonical JSON of the arguments as the program sent them. */
  args_digest: string;
  /** null: the call was still in flight when the run ended (its entry, if any, says how it ended). */
  decision: CallOutcome["decision"] | null;
  decision_id: string | null;
  effect_committed: boolean | "unknown";
  error?: WritErrorBody;
  approval?: ApprovalView;
}

/** The call that ended a run. */
export interface FailedCall {
  index: number;
  tool: string;
  decision_id: string | null;
}

/** What a run answers (`POST /v1/run_code`, MCP `run_code`). */
export interface RunOutcome {
  run: RunLink;
  /** returned: the program returned; threw: it threw; stopped: a limit or a refused call ended it; refused: the policy did not let it start. */
  outcome: "returned" | "threw" | "stopped" | "refused";
  /** The program's return value (JSON; secrets masked), when it returned. */
  value?: unknown;
  ledger: LedgerEntry[];
  logs: string[];
  error?: WritErrorBody;
  /** Why the sandbox stopped the program (a limit, a refused call, a syntax error). */
  stop_reason?: string;
  failed_call?: FailedCall;
  /** The approval the call that ended the run waits for. */
  approval?: ApprovalView;
  /** The calls whose effects happened (or may have) before the run ended. */
  committed_calls: FailedCall[];
}

export interface RunAnswer {
  /** 200 for a returned run; the error's status otherwise. */
  status: number;
  body: RunOutcome;
}

export interface RunRequest {
  subject: Subject;
  code: string;
  session?: string;
  requestId: string;
  /** The tools the program may call (the caller's discoverable tools), by model-facing name. */
  tools: readonly string[];
  limits: Partial<SandboxLimits>;
  /** Aborted when the caller goes away: the run stops, calls in flight are cancelled. */
  signal?: AbortSignal;
  /** The sandbox threads to run on (default: the process's pool). */
  pool?: SandboxPool;
  /**
   * Admits the run once the policy allowed it: its release when it may run now, or the refusal
   * (the caller's cap on runs at once), which the run's entry logs as overruling the policy.
   */
  admit?: () => (() => void) | WritError;
}

/** What a StopRun carries from an inner call to the outcome. */
interface Stopped {
  index: number;
}

function isStopped(detail: unknown): detail is Stopped {
  return isRecord(detail) && typeof detail.index === "number";
}

/** Runs `req.code` for `req.subject`: the run's decision, then the program with its calls. */
export async function runCode(gw: Gateway, req: RunRequest): Promise<RunAnswer> {
  const link: RunLink = { id: randomUUID(), decision_id: timeOrderedUuid() };
  const decided = await decideRun(gw, req, link);
  if (decided instanceof WritError) {
    const refusal = decided;
    return {
      status: refusal.httpStatus,
      body: {
        run: link,
        outcome: "refused",
        ledger: [],
        logs: [],
        error: refusal.toJSON(),
        committed_calls: [],
      },
    };
  }
  try {
    return await runAdmitted(gw, req, link);
  } finally {
    decided();
  }
}

/** The program of a run the policy allowed, with its calls. */
async function runAdmitted(gw: Gateway, req: RunRequest, link: RunLink): Promise<RunAnswer> {
  const ledger = new Map<number, LedgerEntry>();
  const inFlight = new AbortController();
  const call = async (tool: string, args: unknown, index: number): Promise<unknown> => {
    if (!isRecord(args)) throw new TypeError(`tools.${tool} takes one object of arguments`);
    const contract = gw.contracts.resolve(tool, "canonical");
    const entry: LedgerEntry = {
      index,
      tool,
      args_digest: jsonDigest(args),
      decision: null,
      decision_id: null,
      // Until the call answers: a read commits nothing even if the run ends while it is in flight.
      effect_committed: contract === undefined || effectAfterRun(contract) ? "unknown" : false,
    };
    ledger.set(index, entry);
    let outcome: CallOutcome | undefined;
    try {
      [outcome] = await handleProposal(gw, {
        authorization: undefined,
        subject: req.subject,
        format: "canonical",
        payload: { tool, arguments: args },
        ...(req.session === undefined ? {} : { session: req.session }),
        execute: true,
        requestId: req.requestId,
        run: link,
        observer: { signal: inFlight.signal },
      });
    } catch (error) {
      entry.decision = "error";
      entry.effect_committed = false;
      entry.error = WritError.from(error).toJSON();
      throw new StopRun({ index } satisfies Stopped);
    }
    if (outcome === undefined) throw new StopRun({ index } satisfies Stopped);
    entry.decision = outcome.decision;
    entry.decision_id = outcome.decision_id;
    if (outcome.approval) entry.approval = outcome.approval;
    if (outcome.grant === undefined) {
      // Refused by the policy, not normalized, or waiting for approval: nothing ran.
      entry.effect_committed = false;
      if (outcome.error) entry.error = outcome.error;
      throw new StopRun({ index } satisfies Stopped);
    }
    if (outcome.error) {
      entry.error = outcome.error;
      entry.effect_committed = outcome.error.effect_committed;
      throw new InnerCallError(tool, outcome.error);
    }
    entry.effect_committed = contract === undefined ? "unknown" : effectAfterRun(contract);
    return programValue(outcome.result);
  };

  // A call started while the program's answer was built is refused, never made: on the ledger.
  const lateCall: LateCall = (tool, argsJson, index) => {
    ledger.set(index, {
      index,
      tool,
      args_digest: jsonDigest(parsedOrNull(argsJson)),
      decision: "error",
      decision_id: null,
      effect_committed: false,
      error: new WritError(
        "invalid_argument",
        `tools.${tool} (call ${index}) was called while the program's answer was being built (a toJSON of its return value, or a getter of what it threw): it was not made`,
        {
          fieldErrors: [{ path: "/code", message: `call ${index} started after the program's answer` }],
          suggestedFix: "make every call before returning (or throwing): await them, and return plain data",
        },
      ).toJSON(),
    });
  };

  let result: ProgramOutcome;
  try {
    result = await runProgram(req.code, {
      tools: req.tools,
      call,
      lateCall,
      limits: req.limits,
      ...(req.pool ? { pool: req.pool } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
    });
  } finally {
    // A run that ended with calls in flight cancels them (their entries say how they ended).
    inFlight.abort();
  }
  return outcomeOf(
    result,
    link,
    [...ledger.values()].sort((a, b) => a.index - b.index),
  );
}

/** Thrown into the program for an allowed call that failed: `error.detail` is Writ's error. */
class InnerCallError extends Error {
  readonly detail: WritErrorBody;

  constructor(tool: string, error: WritErrorBody) {
    super(`tools.${tool} failed: ${error.category}: ${error.message}`);
    this.name = "ToolCallError";
    this.detail = error;
  }
}

/** What the program receives from a call: the result's structured content (its content items when it has none). */
function programValue(result: LayeredResult | undefined): unknown {
  if (result === undefined) return null;
  if (Object.keys(result.structured_content).length === 0 && result.content !== undefined) {
    return { content: result.content };
  }
  return result.structured_content;
}

/** JSON text's value, or null when it is not JSON (what a refused call's digest covers). */
function parsedOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The run's own decision (`code.run`, logged like any call before anything runs): the release of
 * its admission when the policy allows it (and the caller's cap on runs at once has room); the
 * refusal otherwise. A run never waits for approval: its calls are what approvers decide, each on
 * its own.
 */
async function decideRun(gw: Gateway, req: RunRequest, link: RunLink): Promise<WritError | (() => void)> {
  // The caller's slot is taken before the decision, in one turn (two runs cannot both take the
  // last one); a run over the cap is decided with its limits only metered, so that the refused
  // run is not charged to them, and the cap overrules an allow on its entry.
  const admission = req.admit?.() ?? (() => undefined);
  const capped = admission instanceof WritError ? admission : undefined;
  let evaluation: Evaluation;
  try {
    evaluation = await decideAndLog(
      gw,
      {
        subject: req.subject,
        action: codeRunAction(req.code),
        resource: undefined,
        context: { requestId: req.requestId, source: "canonical", session: req.session, run: link },
        // Like any call: its limits (a `code.run` limit) charged when the policy allows it.
        limits: capped ? "meter" : "charge",
        decisionId: link.decision_id,
      },
      ({ evaluation }) => {
        const admitted = capped && allows(evaluation.decision) ? overrule(evaluation, capped) : evaluation;
        return { value: admitted, evaluation: admitted };
      },
    );
  } catch (error) {
    if (typeof admission === "function") admission();
    throw error;
  }
  const { decision } = evaluation;
  gw.metrics.decisions.inc({ decision: decision.decision });
  if (typeof admission === "function") {
    if (allows(decision)) return admission;
    admission();
  }
  if (decision.decision === "require_approval") {
    const shown = visible(decision.reasons).map((r) => r.message);
    return new WritError(
      "policy_denied",
      `the policy asks approval for running code, which Code Mode does not wait for${shown.length ? ` (${shown.join("; ")})` : ""}`,
      {
        suggestedFix:
          "propose the calls one by one (each can be approved), or ask the policy's owner to allow code.run for you",
      },
    );
  }
  // Denied, over a limit on `code.run` (the limit's refusal), or over the caller's cap.
  return evaluation.overruled?.error ?? denial(decision);
}

/** Whether anything happened: true when a call committed, "unknown" when one may have. */
function committedBefore(ledger: readonly LedgerEntry[]): boolean | "unknown" {
  if (ledger.some((e) => e.effect_committed === true)) return true;
  return ledger.some((e) => e.effect_committed === "unknown") ? "unknown" : false;
}

function callOf(entry: LedgerEntry): FailedCall {
  return { index: entry.index, tool: entry.tool, decision_id: entry.decision_id };
}

/** The answer for what the sandbox reported. */
function outcomeOf(result: ProgramOutcome, link: RunLink, ledger: LedgerEntry[]): RunAnswer {
  const base = {
    run: link,
    ledger,
    logs: result.logs,
    committed_calls: ledger.filter((e) => e.effect_committed !== false).map(callOf),
  };
  if (result.kind === "returned") {
    return { status: 200, body: { ...base, outcome: "returned", value: maskSecrets(result.value) } };
  }
  const committed = committedBefore(ledger);
  if (result.kind === "threw") {
    const error = new WritError("tool_error", `the program threw ${result.name}: ${result.message}`, {
      suggestedFix:
        "fix the program (the ledger says which calls ran, the logs what it printed) and run it again",
      effectCommitted: committed,
    });
    return { status: error.httpStatus, body: { ...base, outcome: "threw", error: error.toJSON() } };
  }
  const detail = result.detail;
  const failed = isStopped(detail) ? ledger.find((e) => e.index === detail.index) : undefined;
  const error =
    result.reason === "run_stopped" && failed !== undefined
      ? innerRefusal(failed, committed)
      : limitError(result.reason, result.message, committed);
  return {
    status: error.httpStatus,
    body: {
      ...base,
      outcome: "stopped",
      stop_reason: result.reason,
      error: error.toJSON(),
      ...(failed === undefined ? {} : { failed_call: callOf(failed) }),
      ...(failed?.approval === undefined ? {} : { approval: failed.approval }),
    },
  };
}

/** The error of a run ended by a refused call (or one waiting for approval). */
function innerRefusal(failed: LedgerEntry, committed: boolean | "unknown"): WritError {
  const inner = failed.error;
  const category = inner?.category ?? "internal";
  const what = `call ${failed.index} (tools.${failed.tool})`;
  const message =
    failed.approval !== undefined
      ? `${what} needs approval ${failed.approval.id}; the run ended there`
      : `${what} was refused: ${inner?.message ?? "no decision"}; the run ended there`;
  const fix =
    failed.approval !== undefined
      ? "once it is approved, collect the call's grant (GET /v1/approvals/{id}) and execute it, or run a program that no longer needs it; a run never resumes"
      : (inner?.suggested_fix ?? "change the program so it makes only calls the policy allows");
  return new WritError(category, message, {
    suggestedFix: fix,
    fieldErrors: inner?.field_errors ?? [],
    effectCommitted: committed,
  });
}

/** The error of a run a limit (or a syntax error, or the caller going away) stopped. */
function limitError(reason: string, message: string, committed: boolean | "unknown"): WritError {
  const options = { effectCommitted: committed, retryable: false };
  switch (reason) {
    case "syntax":
      return new WritError("invalid_argument", `the program does not parse: ${message}`, {
        ...options,
        fieldErrors: [{ path: "/code", message }],
        suggestedFix:
          "fix the syntax (TypeScript or JavaScript, the body of an async function) and run it again",
      });
    case "cpu":
    case "duration":
      return new WritError("timeout", `the program was stopped: ${message}`, {
        ...options,
        suggestedFix: "make the program do less (no endless loops; fewer or faster calls) and run it again",
      });
    case "run_stopped":
      return new WritError("timeout", `the run was stopped: ${message}`, {
        ...options,
        suggestedFix: "run the program again; the ledger says which calls ran before it stopped",
      });
    default:
      return new WritError("invalid_argument", `the program exceeded a limit (${reason}): ${message}`, {
        ...options,
        fieldErrors: [{ path: "/code", message }],
        suggestedFix:
          "keep within the run's limits (memory, stack, number of calls, result size): fewer calls, smaller values",
      });
  }
}
