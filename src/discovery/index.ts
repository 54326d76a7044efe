/**
 * Tool discovery (`tools/list`, `GET /v1/tools`, and MCP's resource and prompt lists): not a stage of a call, but the same policy
 * asked with `context.phase = "discover"`, through the decide stage's one input builder.
 */
import type { Prompt, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { type ModelFamily, modelFamilyOf, type ToolContract } from "../contracts/index.ts";
import { jsonDigest } from "../core/digest.ts";
import type { Gateway } from "../core/gateway.ts";
import type { PolicyDecision, PolicyInput, ProposalSource, Subject } from "../core/types.ts";
import { canonicalAction, isTool, promptContract, resourceContract } from "../normalize/index.ts";
import { policyInput } from "../pipeline/05-decide.ts";
import { evaluateFailClosed, type PolicyFailure } from "../policy/index.ts";

export interface DiscoveredTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  contract: {
    name: string;
    version: string;
    side_effect: ToolContract["side_effect"];
    idempotency: ToolContract["idempotency"];
  };
}

/** An upstream resource, resource template or prompt, with the contract governing it. */
export interface Listed<T> {
  item: T;
  contract: { name: string; version: string };
}

/**
 * Tool discovery: the decision policy runs with `context.phase = "discover"` for each contract,
 * and only tools it does not deny are listed, in the registry's stable order. Results are cached
 * per authorization context (subject, tenant, roles, scopes, policy revision, family), never
 * shared across subjects. An MCP server's resources, resource templates and prompts are listed
 * (for MCP callers) when the contract governing them is visible the same way.
 */
export class ToolDiscovery {
  private readonly cache = new Map<string, readonly ToolContract[]>();

  constructor(private readonly gw: Gateway) {}

  /** The tools `subject` may see, as its family is shown them. */
  list(subject: Subject, family: ModelFamily): DiscoveredTool[] {
    return this.#visible(subject, family)
      .filter(isTool)
      .map((contract) => {
        const view = this.gw.contracts.modelView(contract, family);
        return {
          name: view.name,
          description: view.description,
          input_schema: view.input_schema,
          contract: {
            name: contract.name,
            version: contract.version,
            side_effect: contract.side_effect,
            idempotency: contract.idempotency,
          },
        };
      });
  }

  /**
   * The names `subject` may call tools by from `source`, for suggestions: the canonical names of
   * the contracts discovery shows them, or the tools' model-facing names in that source's family.
   */
  callableNames(subject: Subject, source: ProposalSource): string[] {
    if (source === "canonical") {
      return [...new Set(this.#visible(subject, "default").map((contract) => contract.name))];
    }
    const family = modelFamilyOf(source);
    return this.#visible(subject, family)
      .filter(isTool)
      .map((contract) => this.gw.contracts.modelView(contract, family).name);
  }

  /** The upstream resources whose URI is governed by a contract `subject` may see. */
  resources(subject: Subject): Listed<Resource>[] {
    const visible = new Set(this.#visible(subject, "mcp"));
    return (this.gw.mcp?.catalogs() ?? []).flatMap(({ server, resources }) =>
      resources.flatMap((item) => {
        const governing = resourceContract(this.gw.contracts, item.uri)?.contract;
        return governing !== undefined && visible.has(governing) && serverOf(governing) === server
          ? [{ item, contract: { name: governing.name, version: governing.version } }]
          : [];
      }),
    );
  }

  /** The upstream resource templates that are the `uri` of a contract `subject` may see. */
  templates(subject: Subject): Listed<ResourceTemplate>[] {
    const visible = this.#visible(subject, "mcp");
    return (this.gw.mcp?.catalogs() ?? []).flatMap(({ server, templates }) =>
      templates.flatMap((item) => {
        const governing = visible.find(
          (c) =>
            c.backend.kind === "mcp_resource" &&
            c.backend.server === server &&
            c.backend.uri === item.uriTemplate,
        );
        return governing === undefined
          ? []
          : [{ item, contract: { name: governing.name, version: governing.version } }];
      }),
    );
  }

  /** The upstream prompts governed by a contract `subject` may see. */
  prompts(subject: Subject): Listed<Prompt>[] {
    const visible = new Set(this.#visible(subject, "mcp"));
    return (this.gw.mcp?.catalogs() ?? []).flatMap(({ server, prompts }) =>
      prompts.flatMap((item) => {
        const governing = promptContract(this.gw.contracts, item.name);
        return governing !== undefined && visible.has(governing) && serverOf(governing) === server
          ? [{ item, contract: { name: governing.name, version: governing.version } }]
          : [];
      }),
    );
  }

  /** The contracts the discovery policy shows `subject` (a tool of an MCP server only while it offers it). */
  #visible(subject: Subject, family: ModelFamily): readonly ToolContract[] {
    const revision = this.gw.policy.revision ?? "none";
    const key = JSON.stringify([
      subject.id,
      subject.tenant,
      [...subject.roles].sort(),
      [...subject.scopes].sort(),
      revision,
      family,
      this.gw.mcp?.catalogVersion ?? 0,
    ]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const contracts: ToolContract[] = [];
    for (const contract of this.gw.contracts.list()) {
      // A tool on an MCP server is listed only while that server offers it.
      const backend = contract.backend;
      if (backend.kind === "mcp" && !this.gw.mcp?.offers(backend.server, backend.tool)) continue;
      if (discoverable(this.gw, subject, contract, family)) contracts.push(contract);
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, contracts);
    return contracts;
  }
}

const discoveries = new WeakMap<Gateway, ToolDiscovery>();

/** The gateway's one discovery (and its cache), shared by its entrances and the pipeline. */
export function toolDiscovery(gw: Gateway): ToolDiscovery {
  let discovery = discoveries.get(gw);
  if (discovery === undefined) {
    discovery = new ToolDiscovery(gw);
    discoveries.set(gw, discovery);
  }
  return discovery;
}

/** What the discovery policy answered for one contract: shown or not, and why. */
export interface DiscoveryOutcome {
  /** Whether the contract is listed: the policy decided, and not `deny`. */
  shown: boolean;
  /** The input the policy was asked with (`context.phase = "discover"`). */
  input: PolicyInput;
  /** The policy's decision, when it could decide. */
  decision?: PolicyDecision;
  /** Why it could not decide (then the contract is not shown). */
  failure?: PolicyFailure;
}

/**
 * The discovery input for `contract`: `context.phase = "discover"`, no arguments (`{}`), and the
 * contract's resource type with an empty id, unknown (`known: false`, no owner or tenant).
 */
export function discoveryInput(subject: Subject, contract: ToolContract, family: ModelFamily): PolicyInput {
  const action = canonicalAction(contract, {}, jsonDigest({}));
  const resource = { type: contract.resource?.type ?? "none", id: "", known: false, attributes: {} };
  return policyInput(subject, action, resource, {
    requestId: "discovery",
    source: family === "default" ? "canonical" : family,
    phase: "discover",
  });
}

/**
 * Asks the discovery policy about `contract` for `subject` (see `discoveryInput`): anything but a
 * denial shows it. Fails closed: a contract the policy cannot decide about is not shown.
 */
export function discover(
  gw: Pick<Gateway, "policy">,
  subject: Subject,
  contract: ToolContract,
  family: ModelFamily,
): DiscoveryOutcome {
  const input = discoveryInput(subject, contract, family);
  const { decision, failure } = evaluateFailClosed(gw.policy, input);
  return failure === undefined
    ? { shown: decision.decision !== "deny", input, decision }
    : { shown: false, input, failure };
}

/** Whether the discovery policy shows `contract` to `subject` (`discover`, its failures not counted). */
export function discoverable(
  gw: Pick<Gateway, "policy">,
  subject: Subject,
  contract: ToolContract,
  family: ModelFamily,
): boolean {
  return discover(gw, subject, contract, family).shown;
}

/**
 * The scopes a denied call challenges its caller for (step-up): the decision's `required_scopes`
 * when the caller's token lacks one of them and discovery shows the caller the tool, so a hidden
 * tool's scopes are never told; undefined otherwise (a plain denial).
 */
export function scopeChallenge(
  gw: Pick<Gateway, "policy">,
  subject: Subject,
  contract: ToolContract,
  source: ProposalSource,
  decision: PolicyDecision,
): readonly string[] | undefined {
  const required = decision.required_scopes;
  if (required === undefined || required.every((scope) => subject.scopes.includes(scope))) return undefined;
  return discoverable(gw, subject, contract, modelFamilyOf(source)) ? required : undefined;
}

function serverOf(contract: ToolContract): string | undefined {
  return "server" in contract.backend ? contract.backend.server : undefined;
}
