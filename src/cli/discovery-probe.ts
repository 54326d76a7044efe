/**
 * What a configuration's tool discovery (`GET /v1/tools`, MCP `tools/list`) shows a caller,
 * worked out without a running gateway: the configured policy loaded as `writ serve` loads it
 * (through the same compiled-policy cache beside the SQLite store), the configured contracts, the
 * same issuers, and discovery's own input (`src/discovery/`). `writ tools --as` prints it;
 * `writ policy check`/`test` warn with it when a policy would hide every tool.
 */
import { compiledPolicyOptions } from "../assembly/policy.ts";
import type { GatewayConfig } from "../config/index.ts";
import {
  CompiledContractRegistry,
  type ContractRegistry,
  type ModelFamily,
  type ToolContract,
} from "../contracts/index.ts";
import type { Subject } from "../core/types.ts";
import { type DiscoveryOutcome, discover } from "../discovery/index.ts";
import { ClaimsError, subjectFromClaims } from "../identity/claims.ts";
import {
  IdentityVerifier,
  type IssuerConfigInput,
  parseIdentityConfig,
  trustedIssuers,
} from "../identity/index.ts";
import { loadPolicyBuiltins, PolicyEngine } from "../policy/index.ts";

/** One contract and what discovery answered for it. */
export interface ToolVisibility {
  contract: ToolContract;
  outcome: DiscoveryOutcome;
}

export class DiscoveryProbe {
  #issuers: Promise<IssuerConfigInput[]> | undefined;

  private constructor(
    private readonly policy: PolicyEngine,
    private readonly contracts: ContractRegistry,
    private readonly identity: GatewayConfig["identity"],
  ) {}

  /** Loads the configuration's policy and contracts. Throws PolicyLoadError or WritError. */
  static async load(config: GatewayConfig): Promise<DiscoveryProbe> {
    const contracts = new CompiledContractRegistry(config.tools, { pointer: "/tools" });
    const { policy: settings } = config;
    const builtins = settings.builtins.length > 0 ? await loadPolicyBuiltins(settings.builtins) : undefined;
    const engine = new PolicyEngine({
      entrypoint: settings.entrypoint,
      timeBudgetMs: settings.time_budget_ms,
      regoVersion: settings.rego_version,
      ...(builtins === undefined ? {} : { builtins }),
      ...compiledPolicyOptions(config, settings.dir),
    });
    if (settings.bundle) await engine.loadBundle(settings.bundle);
    else await engine.loadDirectory(settings.dir);
    return new DiscoveryProbe(engine, contracts, config.identity);
  }

  /**
   * The issuers `writ serve` trusts: the configured ones, then the development issuer (its key
   * file created, as serve creates it, only when a token or claims are to be read).
   */
  #trusted(): Promise<IssuerConfigInput[]> {
    this.#issuers ??= trustedIssuers(this.identity);
    return this.#issuers;
  }

  get revision(): string | undefined {
    return this.policy.revision;
  }

  get tools(): readonly ToolContract[] {
    return this.contracts.list();
  }

  /** What discovery answers `subject` for every configured contract, in the registry's order. */
  see(subject: Subject, family: ModelFamily = "default"): ToolVisibility[] {
    return this.contracts.list().map((contract) => ({
      contract,
      outcome: discover({ policy: this.policy }, subject, contract, family),
    }));
  }

  /**
   * The subject a bearer JWT stands for, verified as the gateway verifies it (its issuers,
   * audiences, keys, expiry). Throws the gateway's `unauthenticated` WritError otherwise.
   */
  async subjectOfToken(token: string): Promise<Subject> {
    return new IdentityVerifier({ issuers: await this.#trusted() }).verify(`Bearer ${token}`);
  }

  /**
   * The subject for claims written by hand (`{"sub": "alice", "tenant": "demo", "roles": [...]}`),
   * mapped by the claim names of the issuer its `iss` names (else the development issuer, else
   * the first configured one), unverified. Throws ClaimsError.
   */
  async subjectOfClaims(claims: Record<string, unknown>): Promise<Subject> {
    const { issuers } = parseIdentityConfig({ issuers: await this.#trusted() });
    const byName = (name: unknown) => issuers.find((i) => i.issuer === name);
    const dev = this.identity.dev_issuer;
    const issuer = byName(claims.iss) ?? (dev.enabled ? byName(dev.issuer) : undefined) ?? issuers[0];
    if (issuer === undefined) {
      throw new ClaimsError("the configuration trusts no issuer (identity.issuers, identity.dev_issuer)");
    }
    return subjectFromClaims(claims, issuer);
  }
}
