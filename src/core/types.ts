/**
 * The types the pipeline stages hand each other (DESIGN sections 1–5 and 8), with zod schemas
 * where the data comes from outside (a policy's answer, a stored row).
 */

import { z } from "zod";
import { bounded, NAME_LIMIT } from "./bounded.ts";

// ---------------------------------------------------------------------------------- intake

export type ProposalSource = "openai" | "anthropic" | "mcp" | "canonical";

export const proposalFormats = [
  "auto",
  "openai-chat",
  "openai-responses",
  "anthropic",
  "mcp",
  "canonical",
] as const;
export type ProposalFormat = (typeof proposalFormats)[number];

/** One tool call a model proposed, as the provider adapter read it. Arguments are parsed JSON. */
export interface ProposedCall {
  /** The provider's call id (`call_…`, `toolu_…`, the MCP request id), or one Writ assigned. */
  callId: string;
  /** The model-facing tool name (`repo_read`). */
  tool: string;
  /** Parsed arguments: a JSON object (adapters reject anything else). */
  arguments: Record<string, unknown>;
  source: ProposalSource;
  /** JSON Pointer of the call inside the submitted payload, for field errors. */
  pointer: string;
  /**
   * What an MCP message asks for when it is not a tool call: a resource read (`tool` is the URI)
   * or a prompt (`tool` is the prompt's name); absent for tool calls.
   */
  mcp?: "resource" | "prompt";
}

// ---------------------------------------------------------------------------------- identity

export interface Subject {
  id: string;
  tenant: string;
  roles: string[];
  scopes: string[];
  issuer: string;
  claims: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------- normalization

export type SideEffect = "none" | "reversible" | "committing";
export type Idempotency = "natural" | "keyed" | "none";

export interface CanonicalAction {
  name: string;
  version: string;
  side_effect: SideEffect;
  idempotency: Idempotency;
  data_classification: string;
  args: Record<string, unknown>;
  /** SHA-256 (hex) of the RFC 8785 canonical JSON of `args`. */
  args_digest: string;
}

/** Where the action's resource is, from the contract and the arguments. */
export interface ResourceRef {
  type: string;
  id: string;
}

// ---------------------------------------------------------------------------------- resources

export interface ResourceContext {
  type: string;
  id: string;
  known: boolean;
  owner?: string;
  tenant?: string;
  revision?: string;
  attributes: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------- policy

export interface ApprovalContext {
  id: string;
  approver: { id: string; roles: string[] };
  at_ns: number;
}

/** One limit's usage as the policy sees it (`input.context.usage["<limit name>"]`, src/limits/). */
export interface LimitUsage {
  kind: "calls" | "steps" | "value";
  /** Used now: calls, steps, or the sum of values (a bucket drains, so it may be fractional). */
  used: number;
  /** The bucket's size: `burst` (default `calls`), `steps`, or the value budget's `max`. */
  limit: number;
  remaining: number;
  /** The window the bucket refills over; absent for a step budget. */
  window_s?: number;
}

/**
 * One history fact as the policy sees it (`input.context.history["<fact name>"]`, src/history/):
 * the logged calls it counted within its window for this call's key values.
 */
export interface HistoryValue {
  count: number;
  /** The sum of the fact's `sum` argument (present when the fact has one). */
  sum?: number;
  /** The latest counted entry (absent when none counted). */
  last?: { time_ns: number; decision_id: string };
}

export interface PolicyInput {
  subject: Subject;
  action: CanonicalAction;
  resource: ResourceContext;
  context: {
    time_ns: number;
    request_id: string;
    source: ProposalSource;
    session?: string;
    phase: "call" | "discover";
    approval?: ApprovalContext;
    /** The usage of every limit that applies to the call, by limit name (absent when none does). */
    usage?: Record<string, LimitUsage>;
    /** The history facts whose keys apply to the call, by fact name (absent when none does). */
    history?: Record<string, HistoryValue>;
    /** The Code Mode run a call is made in (and the run's own decision). */
    run?: RunLink;
  };
}

/** A Code Mode run (`input.context.run`): its id, and the decision that let it start. */
export interface RunLink {
  id: string;
  decision_id: string;
}

/** The closed, versioned vocabulary of conditions (DESIGN section 2). */
export const conditionSchema = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("args_override"),
      /** Argument values forced at dispatch, e.g. `{"dry_run": true}`. */
      args: z.record(z.string(), z.unknown()),
    })
    .strict(),
  z
    .object({
      type: z.literal("max_value"),
      /** JSON Pointer to the numeric argument, e.g. `/amount`. */
      path: z.string().startsWith("/"),
      max: z.number(),
    })
    .strict(),
  z
    .object({
      type: z.literal("require_revision"),
      /** The resource revision the call must still see at dispatch (compare-and-swap). */
      revision: z.string(),
    })
    .strict(),
  z
    .object({
      type: z.literal("redact_result"),
      paths: z.array(z.string()).default([]),
      classifications: z.array(z.string()).default([]),
    })
    .strict(),
  z.object({ type: z.literal("max_uses"), uses: z.number().int().positive() }).strict(),
]);
export type Condition = z.infer<typeof conditionSchema>;

export const reasonSchema = z
  .object({
    code: z
      .string()
      .min(1)
      .transform((code) => bounded(code, NAME_LIMIT)),
    message: z.string().transform((message) => bounded(message)),
    visible_to_model: z.boolean().default(true),
  })
  .strict();
export type Reason = z.infer<typeof reasonSchema>;

/** An OAuth scope token (RFC 6749 section 3.3): printable ASCII without space, `"` and `\\`. */
export const scopeTokenSchema = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, {
  error: "must be an OAuth scope token",
});

export const decisionKinds = ["allow", "deny", "require_approval", "allow_with_conditions"] as const;
export type DecisionKind = (typeof decisionKinds)[number];

/**
 * What the decision entrypoint must return. Anything else (undefined, extra fields, an unknown
 * condition) is a policy error, and the call is denied.
 */
export const policyDecisionSchema = z
  .object({
    decision: z.enum(decisionKinds),
    reasons: z.array(reasonSchema).default([]),
    conditions: z.array(z.unknown()).default([]),
    approval: z
      .object({
        approver_roles: z.array(z.string()).min(1),
        ttl_seconds: z
          .number()
          .int()
          .positive()
          .max(7 * 24 * 3600),
      })
      .strict()
      .optional(),
    grant: z
      .object({
        ttl_seconds: z.number().int().positive().optional(),
        max_uses: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    /**
     * A denial for want of OAuth scopes (step-up): every scope the operation needs, which the
     * caller is challenged to get (`WWW-Authenticate: Bearer error="insufficient_scope"`).
     */
    required_scopes: z.array(scopeTokenSchema).min(1).max(32).optional(),
  })
  .strict();
export type PolicyDecision = Omit<z.infer<typeof policyDecisionSchema>, "conditions"> & {
  conditions: Condition[];
};

// ---------------------------------------------------------------------------------- grants

/** Claims of a grant JWT (DESIGN section 5). */
export interface GrantClaims {
  iss: string;
  aud: string;
  sub: string;
  tnt: string;
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
  act: { name: string; version: string };
  res: { type: string; id: string; rev?: string };
  /** SHA-256 (hex) of the RFC 8785 canonical JSON of the final arguments. */
  args: string;
  cnd: Condition[];
  dec: string;
  pol: string;
  max: number;
}

export const GRANT_TYPE = "writ-grant+jwt";
