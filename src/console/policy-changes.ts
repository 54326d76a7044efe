/**
 * The data of the console's "Policy changes" page (issues 19, 31): the archived policy revisions
 * over time, and for a chosen candidate the replay of the viewer's tenant's recent decisions
 * against it (`src/replay/`), as `writ policy replay` does, with the diff of its sources against
 * the live revision (or another). A candidate is an archived revision, or a policy a reviewer
 * uploaded (a folder's files or a bundle), kept in memory for the uploader's tenant only and
 * never archived or served. Each is loaded into an engine of its own, never the live one; a few
 * stay compiled between requests.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import { archivedEngine, PolicyEngine, type PolicyFile, revisionDocument } from "../policy/index.ts";
import { Replay, type ReplayedDecision, type ReplaySummary } from "../replay/index.ts";
import type { PolicyRevisionInfo, TenantScope } from "../store/types.ts";
import { diffSources, type FileDiff } from "./source-diff.ts";

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
    /** An uploaded candidate (its revision id), instead of an archived one. */
    upload: z
      .string()
      .regex(/^[0-9a-f]{1,64}$/)
      .optional(),
    /** The revision the candidate's sources are compared with (default: the live one). */
    base: z.string().max(100).optional(),
    tenant: z.string().max(200).optional(),
  })
  .strict();
export type PolicyChangesQuery = z.output<typeof policyChangesQuerySchema>;

export interface PolicyChanges {
  revisions: PolicyRevisionInfo[];
  live: string | undefined;
  shadow: string | undefined;
  /** The revisions compared: `base` (the live one unless chosen) against the candidate. */
  diff?: { base: string; files: FileDiff[] };
  replay?: {
    candidate: PolicyRevisionInfo;
    /** Whether the candidate was uploaded (not an archived revision). */
    uploaded: boolean;
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
/** Uploaded candidates kept (all tenants together), the oldest dropped first. */
const UPLOADS_KEPT = 8;
/** The most an upload may hold, all files together. */
export const UPLOAD_LIMIT_BYTES = 2 * 1024 * 1024;

/** A policy a reviewer uploaded: its engine, its files (for the diff), and who may use it. */
interface Upload {
  tenant: string;
  info: PolicyRevisionInfo;
  files: PolicyFile[];
  engine: PolicyEngine;
}

/** A file of an upload: its name as the browser sent it (a folder's relative path, or a base name). */
export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
}

export class PolicyChangesSource {
  readonly #gw: Gateway;
  readonly #engines = new Map<string, Promise<PolicyEngine>>();
  readonly #uploads = new Map<string, Upload>();

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
    if (query.upload !== undefined) {
      const upload = this.#uploads.get(uploadKey(scope, query.upload));
      if (upload === undefined) {
        throw new WritError("not_found", `no uploaded candidate ${query.upload} in your tenant`, {
          suggestedFix: "upload the policy again: uploads are kept for a while, in memory, for their tenant",
        });
      }
      return this.#replay(scope, query, base, upload.engine, upload.info, true, upload.files);
    }
    if (query.candidate === undefined) return base;
    const candidate = page.revisions.find((r) => r.id === query.candidate);
    const engine = await this.#engine(query.candidate);
    const info = candidate ?? (await this.#gw.store.getPolicyRevision(query.candidate));
    if (info === undefined) throw notArchived(query.candidate);
    return this.#replay(scope, query, base, engine, info, false, await this.#files(info.id));
  }

  /**
   * Compiles an uploaded policy for `scope`'s tenant: one bundle (`.tar.gz`), or a folder's
   * `.rego` and data files. Names are matched to the live revision's files by their ends, so a
   * folder picked one level up, or files picked without their folder, compare file by file.
   * Resolves to the candidate's revision id; throws PolicyLoadError with the compiler's
   * positioned errors when it does not compile, WritError when the upload is not a policy.
   */
  async upload(scope: TenantScope, uploaded: readonly UploadedFile[]): Promise<string> {
    if (!("tenant" in scope)) {
      throw new WritError("invalid_argument", "upload a candidate from within one tenant", {
        suggestedFix: "open the Policy changes page of the tenant whose decisions it should replay",
      });
    }
    const size = uploaded.reduce((sum, f) => sum + f.bytes.length, 0);
    if (uploaded.length === 0 || size === 0) {
      throw new WritError("invalid_argument", "the upload holds no files", {
        suggestedFix: "choose a policy folder's .rego and data files, or one bundle (.tar.gz)",
      });
    }
    const engine = new PolicyEngine({
      entrypoint: this.#gw.policy.entrypoint,
      ...(this.#gw.policy.builtins === undefined ? {} : { builtins: this.#gw.policy.builtins }),
    });
    const bundle =
      uploaded.length === 1 && /\.(tar\.gz|tgz)$/i.test(uploaded[0]!.name) ? uploaded[0]! : undefined;
    let files: PolicyFile[];
    let id: string;
    if (bundle) {
      id = await engine.loadBundleBytes(bundle.bytes, `upload ${baseName(bundle.name)}`);
      files = (await this.#documentFiles({ kind: "bundle", bytes: bundle.bytes, name: bundle.name })) ?? [];
    } else {
      const live = (await this.#files(this.#gw.policy.revision)) ?? [];
      files = uploaded
        .filter((f) => /\.rego$|(^|\/)data\.(json|ya?ml)$/i.test(f.name))
        .map((f) => ({ path: matchPath(safePath(f.name), live), text: new TextDecoder().decode(f.bytes) }));
      if (files.length === 0) {
        throw new WritError("invalid_argument", "the upload holds no .rego file", {
          suggestedFix: "choose a policy folder's .rego and data files, or one bundle (.tar.gz)",
        });
      }
      id = await engine.loadSources({ kind: "directory", origin: ".", files });
    }
    const digest = createHash("sha256");
    for (const f of uploaded) digest.update(f.name).update("\0").update(f.bytes);
    const info: PolicyRevisionInfo = {
      id,
      kind: bundle ? "bundle" : "directory",
      origin: `uploaded: ${uploaded
        .map((f) => baseName(f.name))
        .join(", ")
        .slice(0, 200)}`,
      loaded_at: new Date().toISOString(),
      size,
      digest: digest.digest("hex"),
    };
    const key = uploadKey(scope, id);
    this.#uploads.delete(key);
    this.#uploads.set(key, { tenant: scope.tenant, info, files, engine });
    for (const old of this.#uploads.keys()) {
      if (this.#uploads.size <= UPLOADS_KEPT) break;
      this.#uploads.delete(old);
    }
    return id;
  }

  async #replay(
    scope: TenantScope,
    query: PolicyChangesQuery,
    base: PolicyChanges,
    engine: PolicyEngine,
    info: PolicyRevisionInfo,
    uploaded: boolean,
    files: PolicyFile[] | undefined,
  ): Promise<PolicyChanges> {
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
    const { id, kind, origin, loaded_at, size, digest } = info;
    const baseId = query.base ?? base.live;
    const baseFiles = baseId === undefined ? undefined : await this.#files(baseId);
    return {
      ...base,
      ...(baseId !== undefined && baseFiles !== undefined && files !== undefined
        ? { diff: { base: baseId, files: diffSources(baseFiles, files) } }
        : {}),
      replay: {
        candidate: { id, kind, origin, loaded_at, size, digest },
        uploaded,
        summary: replay.summary,
        changed,
        inexact,
      },
    };
  }

  /** An archived revision's files (undefined when it is not archived). */
  async #files(id: string | undefined): Promise<PolicyFile[] | undefined> {
    if (id === undefined) return undefined;
    const record = await this.#gw.store.getPolicyRevision(id);
    return record === undefined ? undefined : (await revisionDocument(record)).files;
  }

  /** A bundle's `.rego` files, read as the archive reads an archived bundle. */
  async #documentFiles(bundle: {
    kind: "bundle";
    bytes: Uint8Array;
    name: string;
  }): Promise<PolicyFile[] | undefined> {
    const document = await revisionDocument({
      id: "upload",
      kind: "bundle",
      origin: bundle.name,
      loaded_at: new Date().toISOString(),
      size: bundle.bytes.length,
      digest: "",
      content: bundle.bytes,
    });
    return document.files;
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

function uploadKey(scope: TenantScope, id: string): string {
  return `${"tenant" in scope ? scope.tenant : "*"}\n${id}`;
}

function baseName(name: string): string {
  return name.split(/[\\/]/).at(-1) ?? name;
}

/** A browser's file name as a relative path; anything that could climb out of a folder is refused. */
function safePath(name: string): string {
  const parts = name.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  if (parts.length === 0 || parts.some((p) => p === "..")) {
    throw new WritError(
      "invalid_argument",
      `the uploaded file name ${JSON.stringify(name)} is not a relative path`,
      {
        suggestedFix: "choose the files of a policy folder",
      },
    );
  }
  return parts.join("/");
}

/**
 * The live file an uploaded one stands for: the one whose path ends with the upload's (files
 * chosen without their folder), or whose path the upload's ends with (a folder chosen one level
 * up); else the upload's own path.
 */
function matchPath(name: string, live: readonly PolicyFile[]): string {
  const ends = (long: string, short: string) => long === short || long.endsWith(`/${short}`);
  const candidates = live.filter((f) => ends(f.path, name) || ends(name, f.path));
  return candidates.length === 1 ? candidates[0]!.path : name;
}

function notArchived(id: string): WritError {
  return new WritError("not_found", `policy revision ${id} is not in the archive`, {
    suggestedFix: "choose a revision from the list on this page",
  });
}
