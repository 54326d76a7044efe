/**
 * Stages 4, 5 and 8 as one sequence: the resource read, the policy input built and decided
 * (failing closed, limits applied), what the caller made of the decision, the entry durable,
 * and a shadow policy told. A proposed call, an approver's decision and a Code Mode run are all
 * decided here, so none of them can skip a stage another takes.
 */
import type { Gateway } from "../core/gateway.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import type { CanonicalAction, ResourceContext, ResourceRef, Subject } from "../core/types.ts";
import { type EvaluatedFacts, evaluationEntry } from "../decisionlog/index.ts";
import type { Metered } from "../limits/index.ts";
import { type CallAttributes, decisionAttributes, stage } from "../observability/tracing.ts";
import type { Decided } from "../policy/index.ts";
import type { StoredResource } from "../store/types.ts";
import { resourceContext } from "./04-resource.ts";
import {
  decide,
  type Evaluation,
  evaluateCall,
  meterCall,
  type PolicyContextParts,
  policyInput,
} from "./05-decide.ts";
import { type HistoryRead, historyCall, historyCounts, historyDenied, readHistory } from "./05-history.ts";
import { logDecision } from "./08-log.ts";

export interface DecideRequest {
  subject: Subject;
  action: CanonicalAction;
  /** The resource the call is on, read in stage 4 (none: no resource). */
  resource: ResourceRef | undefined;
  /**
   * The resource as its own table holds it, when it is no row of `resources` (an MCP task,
   * src/mcp/tasks.ts): what the policy sees, as it is; `resource` names it for the log.
   */
  known?: ResourceContext;
  context: Omit<PolicyContextParts, "usage" | "phase" | "history">;
  /**
   * How limits apply: `charge` (a call) charges an allowed call at once, and a limit over its
   * bound overrules the allow; `meter` (an approver's decision) only reads the usage into the
   * input, and the caller charges what it releases (`chargeLimits` with `metered`).
   */
  limits: "charge" | "meter";
  /** What is decided, for the reason of a fail-closed deny (default `call`). */
  what?: Decided;
  /** The decision's id (default a new one): known before it is decided when a span or a run names it. */
  decisionId?: string;
  /** The span attributes of the call, when it is traced. */
  traced?: CallAttributes;
}

/** The decision, as the caller gets it to act on before it is logged. */
export interface Decision {
  decisionId: string;
  evaluation: Evaluation;
  /** The resource as the policy saw it, and as stored. */
  resource: ResourceContext;
  stored: StoredResource | undefined;
  /** The limits' usage read before the policy ran (`limits: "meter"` when any applies). */
  metered: Metered | undefined;
}

/** What the caller made of a decision: its answer, and what the entry records beside the policy's. */
export interface Settled<T> {
  value: T;
  /** The evaluation as the caller overruled it (a cap on runs at once). */
  evaluation?: Evaluation;
  grantJti?: string | null;
  approvalId?: string | null;
  /** What was decided, when it is not the evaluation's decision as is. */
  outcome?: EvaluatedFacts["outcome"];
}

/**
 * Decides `req` and logs it: `settle` acts on the decision (an approval request, a grant, a
 * refusal) before the entry is written, and its value is answered once the entry is durable.
 * A `settle` that throws leaves nothing logged (it logs its own refusal).
 */
export async function decideAndLog<T>(
  gw: Gateway,
  req: DecideRequest,
  settle: (decision: Decision) => Settled<T> | Promise<Settled<T>>,
): Promise<T> {
  const decisionId = req.decisionId ?? timeOrderedUuid();
  const { traced, subject, action } = req;
  const { context: resource, stored } = await stage("resource", traced, () =>
    req.known === undefined
      ? resourceContext(gw.store, req.resource)
      : Promise.resolve({ context: req.known, stored: undefined }),
  ); // 4
  const evaluated = stage(
    "decide",
    traced,
    () => evaluate(gw, req, resource),
    (d) => decisionAttributes(d.evaluation),
  ); // 5
  const { evaluation, metered, history } = evaluated instanceof Promise ? await evaluated : evaluated;
  const settled = await settle({ decisionId, evaluation, resource, stored, metered });
  const logged = settled.evaluation ?? evaluation;
  const counts = historyCounts(gw, history, settled.outcome?.decision ?? logged.decision.decision);
  await stage("log", traced, () =>
    logDecision(gw, {
      ...evaluationEntry({
        decisionId,
        path: gw.policy.entrypoint,
        input: logged.input,
        evaluation: logged,
        subject,
        action: action.name,
        resource: req.resource ?? null,
        requestId: req.context.requestId,
        ...(settled.grantJti === undefined ? {} : { grantJti: settled.grantJti }),
        ...(settled.approvalId === undefined ? {} : { approvalId: settled.approvalId }),
        ...(settled.outcome === undefined ? {} : { outcome: settled.outcome }),
      }),
      ...counts,
    }),
  ); // 8
  // A shadow policy decides too, off the answer's path; its decision never reaches the caller.
  // It sees the live policy's input (with limits' usage) and is compared with its own decision.
  gw.shadow?.observe(
    logged.input,
    { decisionId, decision: logged.overruled?.policy ?? logged.decision, revision: logged.revision },
    { subject, action: action.name, resource: req.resource ?? null, requestId: req.context.requestId },
  );
  return settled.value;
}

interface Evaluated {
  evaluation: Evaluation;
  metered: Metered | undefined;
  /** The history facts read for the call (05-history.ts). */
  history: HistoryRead;
}

/**
 * Stage 5 as `req.limits` says, after the history facts that apply are read. Synchronous (no
 * store round trip, no await) for a call no limit or fact applies to: a proposal's hot path.
 */
function evaluate(
  gw: Gateway,
  req: DecideRequest,
  resource: ResourceContext,
): Evaluated | Promise<Evaluated> {
  const read = readHistory(gw, historyCall(req.subject, req.action, req.resource, req.context));
  return read instanceof Promise
    ? read.then((history) => evaluateWith(gw, req, resource, history))
    : evaluateWith(gw, req, resource, read);
}

function evaluateWith(
  gw: Gateway,
  req: DecideRequest,
  resource: ResourceContext,
  history: HistoryRead,
): Evaluated | Promise<Evaluated> {
  const { subject, action } = req;
  const context = history.values === undefined ? req.context : { ...req.context, history: history.values };
  if (history.failure !== undefined) {
    const input = policyInput(subject, action, resource, context);
    return { evaluation: historyDenied(gw, input, history.failure), metered: undefined, history };
  }
  if (req.limits === "charge") {
    const evaluated = evaluateCall(gw, policyInput(subject, action, resource, context));
    return evaluated instanceof Promise
      ? evaluated.then((evaluation) => ({ evaluation, metered: undefined, history }))
      : { evaluation: evaluated, metered: undefined, history };
  }
  return meterCall(gw, subject, action, context.session).then((metered) => {
    const usage = metered === undefined ? {} : { usage: metered.usage };
    const input = policyInput(subject, action, resource, { ...context, ...usage });
    return { evaluation: decide(gw, input, req.what ?? "call"), metered, history };
  });
}
