/**
 * The gateway's parts and the views its answers carry. Everything here is a type: the pipeline,
 * approvals, discovery and the HTTP and MCP layers import it, and it imports none of them. Each
 * part is named by the interface its consumers use, declared beside the class that implements
 * it in the part's own module (`test/architecture/gateway.test.ts` holds it: no class here).
 */
import type { ContractRegistry } from "../contracts/index.ts";
import type { AuditLog, CheckpointPublisher, RefusalRecorder } from "../decisionlog/index.ts";
import type { BackendCredentials } from "../dispatch/index.ts";
import type { UpstreamMcpServers } from "../dispatch/mcp/servers.ts";
import type { GrantIssuer } from "../grants/index.ts";
import type { HistoryFacts } from "../history/index.ts";
import type { Authenticator } from "../identity/index.ts";
import type { LimitMatcher } from "../limits/index.ts";
import type { MetricsRecorder } from "../observability/metrics.ts";
import type { PolicyDecider } from "../policy/index.ts";
import type { LayeredResult } from "../results/index.ts";
import type { Scheduling } from "../schedule/index.ts";
import type { Store } from "../store/types.ts";
import type { WritErrorBody } from "./errors.ts";
import type { CallObserver, InProcessHandler } from "./handlers.ts";
import type {
  DecisionKind,
  PolicyDecision,
  PolicyInput,
  ProposalFormat,
  ProposedCall,
  Reason,
  ResourceRef,
  RunLink,
  Subject,
} from "./types.ts";

export interface Gateway {
  contracts: ContractRegistry;
  identity: Authenticator;
  store: Store;
  policy: PolicyDecider;
  grants: GrantIssuer;
  log: AuditLog;
  /** Signs checkpoints of the log's head; publishes their keys (absent when checkpoints are off). */
  checkpoints?: CheckpointPublisher;
  /** Refusals of unauthenticated callers, aggregated so that a flood is a few entries with counts. */
  refusals?: RefusalRecorder;
  handlers: ReadonlyMap<string, InProcessHandler>;
  metrics: MetricsRecorder;
  /** The audience of grants for in-process tools. */
  executorId: string;
  /** The clock for approval requests and their expiry (default: the system clock). */
  now?: () => Date;
  /** Backend credentials, attached at dispatch only (HTTP backends' `credentials_ref`). */
  credentials: BackendCredentials;
  /** Connections to the upstream MCP servers (`backend: {kind: mcp}` contracts). */
  mcp?: UpstreamMcpServers;
  /** How a proposal's calls run side by side, and concurrency groups (default: `scheduling`'s defaults). */
  scheduling?: Scheduling;
  /** Budgets and rate limits (`limits:`), charged at the decision stage; absent: none. */
  limits?: LimitMatcher;
  /** History facts (`history:`), read into the policy input and counted as entries are logged; absent: none. */
  history?: HistoryFacts;
  /** A candidate policy deciding beside the live one, off the answer's path (`policy.shadow`). */
  shadow?: ShadowObserver;
}

/** Who and what a call the shadow policy decides is about, for its disagreement's entry. */
export interface ShadowCallContext {
  subject: Subject;
  action: string;
  resource: ResourceRef | null;
  requestId: string;
}

export interface ShadowObserver {
  /** The shadow policy's revision (undefined before it loaded). */
  readonly revision: string | undefined;
  /** Queues the call for the shadow policy; never throws, never waits. */
  observe(
    input: PolicyInput,
    live: { decisionId: string; decision: PolicyDecision; revision: string },
    context: ShadowCallContext,
  ): void;
}

/** What a `require_approval` outcome carries (DESIGN section 2). */
export interface ApprovalView {
  id: string;
  /** `approved` when the same call was proposed again after its approval, before collecting it. */
  status: "pending" | "approved";
  approver_roles: string[];
  expires_at: string;
}

export interface IssuedGrantView {
  token: string;
  jti: string;
  audience: string;
  expires_at: string;
  max_uses: number;
  /**
   * The arguments the grant is bound to (its `args` digest): the call's, with declared paths
   * normalized and the conditions' overrides applied. A caller that sends the call to the
   * executor itself sends exactly these.
   */
  arguments: Record<string, unknown>;
}

export interface ProposalRequest {
  authorization: string | undefined;
  /** The caller, when the entrance already verified `authorization` (identity runs once per request). */
  subject?: Subject;
  format: ProposalFormat;
  payload: unknown;
  /**
   * The calls of `payload`, when the entrance read them already with intake's adapter for
   * `format` (`/mcp` checks a `tools/call` before anything runs): intake takes them as they are.
   */
  proposed?: ProposedCall[];
  session?: string;
  execute: boolean;
  requestId: string;
  /** Who watches executed calls while they run (progress, logs, cancellation). */
  observer?: CallObserver;
  /** The Code Mode run these calls are made in (`input.context.run`). */
  run?: RunLink;
}

export interface CallOutcome {
  call_id: string;
  tool: string;
  decision: DecisionKind | "error";
  /** Reasons the model may see (`visible_to_model`). */
  reasons: Reason[];
  decision_id: string;
  grant?: IssuedGrantView;
  approval?: ApprovalView;
  error?: WritErrorBody;
  result?: LayeredResult;
}

export interface ExecuteRequest {
  authorization: string | undefined;
  /** The caller, when the entrance already verified `authorization` (identity runs once per request). */
  subject?: Subject;
  grant: string;
  /** The call as the caller sends it (canonical form: `{tool, arguments}`, unless `format` says otherwise). */
  call: unknown;
  /** The call's format (default `canonical`); MCP callers send their `tools/call` request. */
  format?: Exclude<ProposalFormat, "auto">;
  requestId: string;
  /** Who watches the call while it runs (progress, logs, cancellation). */
  observer?: CallObserver;
}
