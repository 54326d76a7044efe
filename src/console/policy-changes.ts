/**
 * The data of the console's "Policy changes" page (issue 19): the archived policy revisions over
 * time, and for a chosen candidate revision the replay of the viewer's tenant's recent decisions
 * against it (`src/replay/`), as `writ policy replay` does. The candidate is loaded from the
 * archive into an engine of its own, never the live one; a few stay compiled between requests.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import { archivedEngine, type PolicyEngine } from "../policy/index.ts";
import { Replay, type ReplayedDecision, type ReplaySummary } from "../replay/index.ts";
import type { PolicyRevisionInfo, TenantScope } from "../store/types.ts";

export const policyChangesQuerySchema = z
  .object({
    candidate: z
      .string()
      .max(100)
      .optional()
      .transform((c) => (c === "" ? undefined : c)),
    /** How far back the replay reaches (days). */
    days: z.coerce.number().int().min(1).max(90).default(7),
    /** At most this many decisions are replayed (the newest). */
    limit: z.coerce.number().int().min(1).max(20_000).default(2_000),
    tenant: z.string().max(200).optional(),
  })
  .strict();
export type PolicyChangesQuery = z.output<typeof policyChangesQuerySchema>;

export interface PolicyChanges {
  revisions: PolicyRevisionInfo[];
  live: string | undefined;
  shadow: string | undefined;
  replay?: {
    candidate: PolicyRevisionInfo;
    summary: ReplaySummary;
    /** Exact replays whose outcome changed, newest first (at most SHOWN). */
    changed: ReplayedDecision[];
    /** Replays over a redacted input whose outcome came out different: they may or may not change. */
    inexact: ReplayedDecision[];
  };
}

/** Changed decisions listed on the page (the summary counts them all). */
export const SHOWN = 200;
/** Candidates kept compiled between requests. */
const KEPT = 4;

export class PolicyChangesSource {
  readonly #gw: Gateway;
  readonly #engines = new Map<string, Promise<PolicyEngine>>();

  constructor(gw: Gateway) {
    this.#gw = gw;
  }

  async read(scope: TenantScope, query: PolicyChangesQuery): Promise<PolicyChanges> {
    const page = await this.#gw.store.listPolicyRevisions(100);
    const base: PolicyChanges = {
      revisions: page.revisions,
      live: this.#gw.policy.revision,
      shadow: this.#gw.shadow?.revision,
    };
    if (query.candidate === undefined) return base;
    const candidate = page.revisions.find((r) => r.id === query.candidate);
    const engine = await this.#engine(query.candidate);
    const since = new Date(Date.now() - query.days * 86_400_000).toISOString();
    // The viewer's tenant only, as every console surface.
    const scoped = {
      queryDecisions: (filter: Parameters<Gateway["log"]["queryIn"]>[1], limit: number, cursor?: string) =>
        this.#gw.log.queryIn(scope, filter, limit, cursor),
    };
    const replay = new Replay(scoped, engine, { filter: { since }, limit: query.limit });
    const changed: ReplayedDecision[] = [];
    const inexact: ReplayedDecision[] = [];
    for await (const result of replay) {
      if (result.kind !== "replayed" || !result.changed) continue;
      const list = result.exact ? changed : inexact;
      if (list.length < SHOWN) list.push(result);
    }
    const info = candidate ?? (await this.#gw.store.getPolicyRevision(query.candidate));
    if (info === undefined) throw notArchived(query.candidate);
    const { id, kind, origin, loaded_at, size, digest } = info;
    return {
      ...base,
      replay: {
        candidate: { id, kind, origin, loaded_at, size, digest },
        summary: replay.summary,
        changed,
        inexact,
      },
    };
  }

  #engine(id: string): Promise<PolicyEngine> {
    let engine = this.#engines.get(id);
    if (engine === undefined) {
      engine = this.#load(id);
      engine.catch(() => this.#engines.delete(id));
      this.#engines.set(id, engine);
      for (const old of this.#engines.keys()) {
        if (this.#engines.size <= KEPT) break;
        this.#engines.delete(old);
      }
    }
    return engine;
  }

  async #load(id: string): Promise<PolicyEngine> {
    const engine = await archivedEngine(this.#gw.store, id, {
      entrypoint: this.#gw.policy.entrypoint,
      builtins: this.#gw.policy.builtins,
    });
    if (engine === undefined) throw notArchived(id);
    return engine;
  }
}

function notArchived(id: string): WritError {
  return new WritError("not_found", `policy revision ${id} is not in the archive`, {
    suggestedFix: "choose a revision from the list on this page",
  });
}
