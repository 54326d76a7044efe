/**
 * Policy revisions archived in the store (issue 19): every revision the engine installs (the
 * first load, a watched reload, a bundle polled from a server) is kept under the id its decisions
 * name, so that it can be read back, loaded again and compared against.
 *
 * What is kept: a folder's `.rego` and data files (JSON `{files: [{path, text}]}`, paths inside
 * the folder), or a bundle's bytes as loaded. Loading either back gives the same revision id.
 * Archiving never blocks serving and never fails a load: a failure is reported and the revision is
 * tried again with the next load.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import { readBundle } from "../rego/bundle/index.ts";
import type {
  NewPolicyRevision,
  PolicyRevisionInfo,
  PolicyRevisionRecord,
  PolicyRevisionStore,
} from "../store/types.ts";
import type { CustomBuiltins } from "./builtins.ts";
import type { CompiledPolicyCache } from "./compiled-cache.ts";
import { PolicyEngine } from "./engine.ts";
import type { LoadedRevision, PolicyFile, RevisionSources } from "./sources.ts";

const directoryContentSchema = z.object({
  files: z.array(z.object({ path: z.string().min(1), text: z.string() }).strict()),
  /** The folder's Rego version when it is not 1 (`policy.rego_version: 0`). */
  rego_version: z.literal(0).optional(),
});

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** What the store keeps of a loaded revision. */
export function archivedRevision(loaded: LoadedRevision): NewPolicyRevision {
  const { sources } = loaded;
  const content =
    sources.kind === "bundle"
      ? sources.bytes
      : encoder.encode(
          JSON.stringify({
            files: sources.files.map(({ path, text }) => ({ path, text })),
            ...(sources.regoVersion === 0 ? { rego_version: 0 } : {}),
          }),
        );
  return { id: loaded.id, kind: sources.kind, origin: sources.origin, content };
}

/** The sources of an archived revision, as the engine loads them. */
export function revisionSources(record: PolicyRevisionRecord): RevisionSources {
  if (record.kind === "bundle") return { kind: "bundle", origin: record.origin, bytes: record.content };
  let content: z.output<typeof directoryContentSchema>;
  try {
    content = directoryContentSchema.parse(JSON.parse(decoder.decode(record.content)));
  } catch {
    throw new WritError("internal", `the archived policy revision ${record.id} is unreadable`, {
      suggestedFix: "the database was changed outside Writ: restore it from a backup",
    });
  }
  const { files, rego_version } = content;
  return {
    kind: "directory",
    origin: record.origin,
    files,
    ...(rego_version === 0 ? { regoVersion: 0 } : {}),
  };
}

/** An archived revision as reviewers read it: what it is, and its sources. */
export type RevisionDocument = PolicyRevisionInfo & {
  /**
   * The Rego and data files of a folder; the `.rego` files (paths inside the bundle) of a bundle.
   * A `.rego` file's `rego_version` is given when it is known: a folder loaded with
   * `policy.rego_version`, a bundle whose manifest says it.
   */
  files: PolicyFile[];
  /** A bundle's manifest and data (absent for a folder, whose data files are among `files`). */
  manifest?: unknown;
  data?: unknown;
  /** A bundle's bytes, base64. */
  bundle_base64?: string;
};

/** The revision with its sources readable: a bundle is unpacked (its module stays in the bytes). */
export async function revisionDocument(record: PolicyRevisionRecord): Promise<RevisionDocument> {
  const { content, ...info } = record;
  const sources = revisionSources(record);
  if (sources.kind === "directory") {
    const { regoVersion } = sources;
    if (regoVersion === undefined) return { ...info, files: sources.files };
    const files = sources.files.map((f) =>
      f.path.endsWith(".rego") ? { ...f, rego_version: regoVersion } : f,
    );
    return { ...info, files };
  }
  const bundle_base64 = Buffer.from(content).toString("base64");
  try {
    const bundle = await readBundle(content);
    const files = bundle.sources.map((s) => ({
      path: s.file,
      text: s.source,
      ...(s.regoVersion === undefined ? {} : { rego_version: s.regoVersion }),
    }));
    return { ...info, files, manifest: bundle.manifest, data: bundle.data, bundle_base64 };
  } catch {
    // It loaded when it was archived; whatever it holds, its bytes are what was served.
    return { ...info, files: [], bundle_base64 };
  }
}

/** Loads an archived revision into `engine`; resolves to the revision id it computes (the same). */
export async function loadRevision(engine: PolicyEngine, record: PolicyRevisionRecord): Promise<string> {
  const sources = revisionSources(record);
  return sources.kind === "bundle"
    ? engine.loadBundleBytes(sources.bytes, sources.origin)
    : engine.loadSources(sources);
}

/**
 * An engine of its own holding the archived revision `id` (never the live one), or undefined when
 * the archive does not have it. Throws PolicyLoadError when it does not load.
 */
export async function archivedEngine(
  store: Pick<PolicyRevisionStore, "getPolicyRevision">,
  id: string,
  options: {
    entrypoint: string;
    compiledCache?: CompiledPolicyCache | undefined;
    /** The custom builtins the live policy has (`policy.builtins`), which a revision may call. */
    builtins?: CustomBuiltins | undefined;
  },
): Promise<PolicyEngine | undefined> {
  const record = await store.getPolicyRevision(id);
  if (record === undefined) return undefined;
  const engine = new PolicyEngine({
    entrypoint: options.entrypoint,
    ...(options.compiledCache === undefined ? {} : { compiledCache: options.compiledCache }),
    ...(options.builtins === undefined ? {} : { builtins: options.builtins }),
  });
  await loadRevision(engine, record);
  return engine;
}

/**
 * Keeps every revision the engine loads in the store, one at a time and in order. A failed
 * archive is reported (`onError`) and kept to be tried again with the next load; nothing here
 * throws into the engine or delays a load.
 */
export class RevisionArchive {
  readonly #store: Pick<PolicyRevisionStore, "archivePolicyRevision">;
  readonly #onError: (error: unknown, revision: string) => void;
  /** Revisions not archived yet (failed, or waiting their turn), by id. */
  readonly #pending = new Map<string, NewPolicyRevision>();
  #queue: Promise<void> = Promise.resolve();

  constructor(
    store: Pick<PolicyRevisionStore, "archivePolicyRevision">,
    onError: (error: unknown, revision: string) => void,
  ) {
    this.#store = store;
    this.#onError = onError;
  }

  /** Archives `loaded`, and again every revision whose archiving failed before. */
  keep(loaded: LoadedRevision): void {
    this.#pending.set(loaded.id, archivedRevision(loaded));
    this.#queue = this.#queue.then(() => this.#flush());
  }

  /** Resolves once every archive asked for so far was tried. */
  settled(): Promise<void> {
    return this.#queue;
  }

  /** The ids whose archiving failed and waits for the next load. */
  get unarchived(): string[] {
    return [...this.#pending.keys()];
  }

  async #flush(): Promise<void> {
    for (const [id, revision] of [...this.#pending]) {
      try {
        await this.#store.archivePolicyRevision(revision);
        this.#pending.delete(id);
      } catch (error) {
        this.#onError(error, id);
      }
    }
  }
}
