/**
 * The demo backend: the virtual repository of the seed chapter. `README.md` says `sum` adds two
 * numbers, `src/sum.ts` computes `a - b`, and a `.env` that no task may read sits beside them.
 *
 * Tools (in-process handlers, reached only with a verified grant):
 * - `repo.search`  — case-sensitive substring search over the workspace's readable files; the
 *                    first 8 matching lines in path order;
 * - `repo.read`    — a file's content and its hash (SHA-256 of the content's JSON encoding);
 * - `repo.propose_edit` — a preview of replacing `before` (which must occur exactly once) by
 *                    `after` in a file whose hash is still `base_hash`; nothing is written;
 * - `repo.apply_edit` — writes that replacement (committing): compare-and-swap on `base_hash`, so
 *                    a file that changed since it was read is refused as `stale_revision`; the
 *                    workspace's `files` hash is updated;
 * - `repo.finish`  — ends the task with a summary.
 *
 * The handlers check the workspace's paths again (the executor never trusts that the gateway
 * did), and record what the workspace has read and proposed in the resource's attributes, which
 * is what the policy reads.
 *
 * The files' contents live in the store beside their hashes, as the attributes of a resource of
 * type `workspace_files` with the workspace's id (never the resource of a call, so contents never
 * reach the policy input or the decision log): a restart, or another instance on the same store,
 * sees the edits, and an edit is a compare-and-swap on that resource's revision. Like every
 * store read on a caller's behalf, it is read within the workspace's tenant: a `workspace_files`
 * resource of that id held by another tenant is never read (nor seeded over), whoever made it.
 */
import { jsonDigest } from "../core/digest.ts";
import { WritError } from "../core/errors.ts";
import type { InProcessHandler } from "../core/handlers.ts";
import { isRecord } from "../core/json.ts";
import type { ResourceStore, ResourceWrite, StoredResource, TenantScope } from "../store/types.ts";

/** The resource type that holds a workspace's file contents (`attributes.contents`). */
export const FILES_TYPE = "workspace_files";

export const DEMO_FILES: Readonly<Record<string, string>> = {
  "README.md": "# calc\n\n`sum(a, b)` returns the sum of two numbers.\n",
  "src/sum.ts": "export const sum = (a: number, b: number) => a - b;\n",
  ".env": "CALC_ENDPOINT=http://127.0.0.1:9/unused\n",
};

/** Hash of a file's content as the demo tools report it. */
export function contentHash(content: string): string {
  return jsonDigest(content);
}

/** The `ws-demo` workspace the default config seeds: alice may read two files and edit one. */
export function demoWorkspace(files: Readonly<Record<string, string>> = DEMO_FILES): ResourceWrite {
  return {
    type: "workspace",
    id: "ws-demo",
    owner: "alice",
    tenant: "demo",
    attributes: {
      read_paths: ["README.md", "src/sum.ts"],
      edit_paths: ["src/sum.ts"],
      files: Object.fromEntries(Object.entries(files).map(([p, c]) => [p, contentHash(c)])),
      reads: {},
      proposals: [],
    },
  };
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function stringArg(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== "string") {
    throw new WritError("invalid_argument", `${name} must be a string`, {
      fieldErrors: [{ path: `/arguments/${name}`, message: "must be a string" }],
      suggestedFix: `pass ${name} as a string`,
    });
  }
  return value;
}

function forbidden(message: string): WritError {
  return new WritError("policy_denied", message, {
    suggestedFix:
      "stay inside the workspace's paths; the executor refuses anything else whatever the gateway said",
  });
}

/** A workspace as its files are found: by its id, within its tenant, held by its owner. */
type WorkspaceRef = Pick<StoredResource, "id" | "owner" | "tenant">;

export class VirtualRepository {
  readonly #seed: Readonly<Record<string, string>>;
  /** The seeding of each workspace's contents, once per instance. */
  readonly #seeded = new Map<string, Promise<StoredResource>>();

  constructor(
    private readonly store: ResourceStore,
    files: Readonly<Record<string, string>> = DEMO_FILES,
    /** The workspace whose contents `read` and `write` reach. */
    private readonly workspace: string = "ws-demo",
  ) {
    this.#seed = files;
  }

  /** A file of the workspace as stored now. */
  async read(path: string): Promise<string | undefined> {
    return contentsOf(await this.filesOf(await this.operatorWorkspace()))[path];
  }

  /** Writes a file outside any tool call (an operator's change) and returns its new hash. */
  async write(path: string, content: string): Promise<string> {
    const ws = await this.operatorWorkspace();
    await this.changeFiles(ws, () => ({ files: { [path]: content }, value: undefined }));
    return contentHash(content);
  }

  /** The workspace `read` and `write` reach, as stored (its owner and tenant hold its files). */
  private async operatorWorkspace(): Promise<WorkspaceRef> {
    const ws = await this.store.getResource("workspace", this.workspace);
    return { id: this.workspace, owner: ws?.owner ?? "alice", tenant: ws?.tenant ?? "demo" };
  }

  /**
   * The stored contents of a workspace, within its tenant, seeded with the initial files on first
   * use. Another tenant's resource of that name is refused, never read.
   */
  private async filesOf(ws: WorkspaceRef): Promise<StoredResource> {
    const scope: TenantScope = { tenant: ws.tenant };
    const stored = await this.store.getResourceIn(scope, FILES_TYPE, ws.id);
    if (stored) return stored;
    const key = `${ws.tenant}\u0000${ws.id}`;
    let seeding = this.#seeded.get(key);
    if (seeding === undefined) {
      seeding = this.seedFiles(ws, scope);
      this.#seeded.set(key, seeding);
      seeding.catch(() => this.#seeded.delete(key));
    }
    return seeding;
  }

  private async seedFiles(ws: WorkspaceRef, scope: TenantScope): Promise<StoredResource> {
    const written = await this.store.putResourceIn(scope, {
      type: FILES_TYPE,
      id: ws.id,
      owner: ws.owner,
      tenant: ws.tenant,
      attributes: { contents: { ...this.#seed } },
    });
    if (written.ok) return written.resource;
    throw new WritError("conflict", `the files of workspace ${ws.id} are held by another tenant`, {
      suggestedFix:
        "ask the operator to remove the workspace_files resource of that id from the other tenant (or rename the workspace)",
    });
  }

  /**
   * Applies `change` (the files it replaces, computed from the contents as stored) with
   * compare-and-swap on the contents' revision, computing it again when another write won;
   * `change` throws to refuse (e.g. `stale_revision`).
   */
  private async changeFiles<T>(
    ws: WorkspaceRef,
    change: (contents: Record<string, string>) => { files: Record<string, string>; value: T },
  ): Promise<T> {
    for (let attempt = 0; attempt < 8; attempt++) {
      const stored = await this.filesOf(ws);
      const contents = contentsOf(stored);
      const { files, value } = change(contents);
      // At the revision read within the tenant: a row another tenant took since is not written.
      const updated = await this.store.updateResourceAttributes(FILES_TYPE, ws.id, stored.revision, {
        ...stored.attributes,
        contents: { ...contents, ...files },
      });
      if (updated) return value;
    }
    throw new WritError("conflict", "the workspace's files kept changing while the edit was written", {
      retryable: true,
      suggestedFix: "read the file again and retry the edit",
    });
  }

  private workspaceOf(resource: StoredResource | undefined): {
    resource: StoredResource;
    attrs: Record<string, unknown>;
  } {
    if (resource?.type !== "workspace") {
      throw new WritError("not_found", "the workspace does not exist", {
        suggestedFix: "use a workspace you were given",
      });
    }
    return { resource, attrs: resource.attributes };
  }

  /**
   * Updates the workspace's attributes with compare-and-swap on its revision, retrying when a
   * concurrent call moved it.
   */
  private async record(
    resource: StoredResource,
    change: (attrs: Record<string, unknown>) => Record<string, unknown>,
  ): Promise<StoredResource> {
    let current: StoredResource | undefined = resource;
    for (let attempt = 0; attempt < 8 && current; attempt++) {
      const updated = await this.store.updateResourceAttributes(
        current.type,
        current.id,
        current.revision,
        change(current.attributes),
      );
      if (updated) return updated;
      current = await this.store.getResource(resource.type, resource.id);
    }
    throw new WritError("conflict", "the workspace kept changing while the call was recorded", {
      retryable: true,
      suggestedFix: "retry the call",
    });
  }

  /**
   * The checks every edit makes: the path is editable, the file still has the base hash, and
   * `before` occurs exactly once. Returns the file as it would be after the edit.
   */
  private checkedEdit(
    args: Record<string, unknown>,
    attrs: Record<string, unknown>,
    contents: Readonly<Record<string, string>>,
  ): { path: string; baseHash: string; edited: string } {
    const path = stringArg(args, "path");
    const baseHash = stringArg(args, "base_hash");
    const before = stringArg(args, "before");
    const after = stringArg(args, "after");
    if (!stringList(attrs.edit_paths).includes(path))
      throw forbidden(`${path} is not editable in this workspace`);
    const content = contents[path] ?? "";
    if (contentHash(content) !== baseHash) {
      throw new WritError("stale_revision", `${path} changed since it was read`, {
        suggestedFix: "read the file again and redo the edit",
      });
    }
    const occurrences = countOccurrences(content, before);
    if (occurrences !== 1) {
      throw new WritError(
        "invalid_argument",
        `\`before\` occurs ${occurrences} times in ${path}; it must occur exactly once`,
        {
          fieldErrors: [{ path: "/arguments/before", message: `occurs ${occurrences} times` }],
          suggestedFix: "quote enough surrounding text in `before` to pick one place",
        },
      );
    }
    return { path, baseHash, edited: replaceOnce(content, before, after) };
  }

  handlers(): Record<string, InProcessHandler> {
    return {
      "repo.search": async ({ args, resource }) => {
        const { resource: ws, attrs } = this.workspaceOf(resource);
        const query = stringArg(args, "query");
        const contents = contentsOf(await this.filesOf(ws));
        const matches: Array<{ path: string; line: number; text: string }> = [];
        for (const path of stringList(attrs.read_paths)) {
          const lines = (contents[path] ?? "").split("\n");
          lines.forEach((text, i) => {
            if (matches.length < 8 && text.includes(query)) matches.push({ path, line: i + 1, text });
          });
        }
        return {
          summary:
            matches.length === 0
              ? `no line contains ${JSON.stringify(query)} in the readable files`
              : `${matches.length} matching line(s)`,
          structured_content: { query, matches, provenance: "untrusted_search_result" },
          target: "readable files",
        };
      },
      "repo.read": async ({ args, resource }) => {
        const { resource: ws, attrs } = this.workspaceOf(resource);
        const path = stringArg(args, "path");
        if (!stringList(attrs.read_paths).includes(path))
          throw forbidden(`${path} is not readable in this workspace`);
        const content = contentsOf(await this.filesOf(ws))[path];
        if (content === undefined)
          throw new WritError("not_found", `${path} does not exist`, { suggestedFix: "search first" });
        const hash = contentHash(content);
        const updated = await this.record(ws, (a) => {
          const reads = isRecord(a.reads) ? a.reads : {};
          const seen = stringList(reads[path]);
          return { ...a, reads: { ...reads, [path]: seen.includes(hash) ? seen : [...seen, hash] } };
        });
        return {
          summary: `read ${path} (${content.length} characters)`,
          structured_content: { path, content, hash, provenance: "untrusted_file" },
          target: path,
          resource_revision: updated.revision,
        };
      },
      "repo.propose_edit": async ({ args, resource }) => {
        const { resource: ws, attrs } = this.workspaceOf(resource);
        const contents = contentsOf(await this.filesOf(ws));
        const { path, baseHash, edited: preview } = this.checkedEdit(args, attrs, contents);
        const updated = await this.record(ws, (a) => ({
          ...a,
          proposals: [...new Set([...stringList(a.proposals), path])],
        }));
        return {
          summary: `proposed an edit of ${path} (preview only, nothing written)`,
          structured_content: { path, base_hash: baseHash, preview, preview_hash: contentHash(preview) },
          target: path,
          resource_revision: updated.revision,
        };
      },
      "repo.apply_edit": async ({ args, resource }) => {
        const { resource: ws, attrs } = this.workspaceOf(resource);
        // Checked against the contents as stored, written with compare-and-swap on their revision:
        // a file that changed in between is checked again (and refused as stale_revision).
        const { path, baseHash, edited } = await this.changeFiles(ws, (contents) => {
          const edit = this.checkedEdit(args, attrs, contents);
          return { files: { [edit.path]: edit.edited }, value: edit };
        });
        const hash = contentHash(edited);
        const updated = await this.record(ws, (a) => ({
          ...a,
          files: { ...(isRecord(a.files) ? a.files : {}), [path]: hash },
        }));
        return {
          summary: `applied the edit of ${path}`,
          structured_content: { path, base_hash: baseHash, hash },
          target: path,
          resource_revision: updated.revision,
        };
      },
      "repo.finish": async ({ args, resource }) => {
        this.workspaceOf(resource);
        const summary = stringArg(args, "summary");
        return { summary: "task finished", structured_content: { summary }, target: "task" };
      },
    };
  }
}

/** The stored contents of a workspace's files (only string entries count). */
function contentsOf(stored: StoredResource): Record<string, string> {
  const contents = stored.attributes.contents;
  if (!isRecord(contents)) return {};
  return Object.fromEntries(
    Object.entries(contents).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

/**
 * `text` with its first occurrence of `before` replaced by `after`, literally: unlike
 * `String.prototype.replace`, `$&`, `` $` ``, `$'` and `$1` in `after` are not patterns, so what
 * runs is what the approver saw. The caller checked that `before` occurs (exactly once).
 */
export function replaceOnce(text: string, before: string, after: string): string {
  const at = text.indexOf(before);
  return at === -1 ? text : text.slice(0, at) + after + text.slice(at + before.length);
}

function countOccurrences(text: string, part: string): number {
  if (part === "") return 0;
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}
