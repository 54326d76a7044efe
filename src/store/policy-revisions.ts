/**
 * Archived policy revisions (`policy_revisions`, a migration of its own in each dialect):
 * `PolicyRevisionStore` and its SQL (`SqlPolicyRevisions`), shared by both dialects. Every
 * revision Writ loaded, under the id decision-log entries name (`bundles.writ.revision`), with its content (a
 * folder's sources and data files, or a bundle's bytes). Archiving is idempotent: the first load
 * of a revision is kept, later loads of it change nothing.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { decodeCursor, encodeCursor, pageOf, pageSize } from "./paging.ts";
import { parseStored } from "./rows.ts";
import { raw, type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** Where a policy revision came from: a folder of sources and data, or a bundle. */
export const policySourceKinds = ["directory", "bundle"] as const;
export type PolicySourceKind = (typeof policySourceKinds)[number];

/** A policy revision Writ loaded, as listed (src/policy/revisions.ts says what its content holds). */
export interface PolicyRevisionInfo {
  /** The revision id decision-log entries name (`bundles.writ.revision`). */
  id: string;
  kind: PolicySourceKind;
  /** Where it was loaded from: the folder, the bundle file, the bundle server's URL. */
  origin: string;
  /** ISO 8601: when this revision was first loaded. */
  loaded_at: string;
  /** The content's size in bytes. */
  size: number;
  /** SHA-256 (hex) of the content. */
  digest: string;
}

/** An archived revision with its content: the sources and data files, or the bundle's bytes. */
export interface PolicyRevisionRecord extends PolicyRevisionInfo {
  content: Uint8Array;
}

/** What archiving a revision takes; the store adds the time, size and digest. */
export interface NewPolicyRevision {
  id: string;
  kind: PolicySourceKind;
  origin: string;
  content: Uint8Array;
}

export interface PolicyRevisionPage {
  revisions: PolicyRevisionInfo[];
  next_cursor?: string;
}

export interface PolicyRevisionStore {
  /**
   * Keeps a policy revision Writ loaded (policies are the deployment's: no tenant). Idempotent:
   * true when it was new, false (nothing written) when that id is archived already.
   */
  archivePolicyRevision(revision: NewPolicyRevision, now?: Date): Promise<boolean>;
  /** The archived revisions, newest first, without their content. */
  listPolicyRevisions(limit: number, cursor?: string): Promise<PolicyRevisionPage>;
  /** One archived revision with its content, or undefined when that id was never archived. */
  getPolicyRevision(id: string): Promise<PolicyRevisionRecord | undefined>;
}

const INFO_COLUMNS = raw("seq, id, kind, origin, loaded_at, size, digest");

const newRevisionSchema = z.object({
  id: z.string().min(1).max(200),
  kind: z.enum(policySourceKinds),
  origin: z.string().max(2000),
  content: z.instanceof(Uint8Array),
});

const infoRowSchema = z.object({
  seq: z.number().int().positive(),
  id: z.string(),
  kind: z.enum(policySourceKinds),
  origin: z.string(),
  loaded_at: z.number().int(),
  size: z.number().int().nonnegative(),
  digest: z.string(),
});

const recordRowSchema = infoRowSchema.extend({ content: z.instanceof(Uint8Array) });

function infoOf(row: z.output<typeof infoRowSchema>): PolicyRevisionInfo {
  const { seq: _, loaded_at, ...rest } = row;
  return { ...rest, loaded_at: new Date(loaded_at).toISOString() };
}

/** The INSERT of a revision, after checking it; it changes nothing when the id is archived already. */
function archiveRevisionQuery(revision: NewPolicyRevision, now: Date): Sql {
  const parsed = newRevisionSchema.safeParse(revision);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the policy revision to archive is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/revision"),
      suggestedFix:
        "archive revisions as the policy engine reports them (src/policy/revisions.ts): an id, kind directory or bundle, an origin and the content's bytes",
    });
  }
  const r = parsed.data;
  const digest = createHash("sha256").update(r.content).digest("hex");
  return sql`INSERT INTO policy_revisions (id, kind, origin, loaded_at, size, digest, content)
    VALUES (${r.id}, ${r.kind}, ${r.origin}, ${now.getTime()}, ${r.content.byteLength}, ${digest}, ${r.content})
    ON CONFLICT (id) DO NOTHING`;
}

/** Newest first, a page of `limit` after `cursor`; one row more than the page tells whether another follows. */
function revisionsQuery(limit: number, cursor: string | undefined): { query: Sql; size: number } {
  const size = pageSize(limit);
  const before = cursor === undefined ? raw("") : sql`WHERE seq < ${decodeCursor(cursor)}`;
  return {
    query: sql`SELECT ${INFO_COLUMNS} FROM policy_revisions ${before} ORDER BY seq DESC LIMIT ${size + 1}`,
    size,
  };
}

function revisionsPageOf(rows: readonly unknown[], size: number): PolicyRevisionPage {
  const page = pageOf(
    rows,
    size,
    (row) => parseStored(infoRowSchema, row, "a policy revision"),
    (r) => r.seq,
    encodeCursor,
  );
  const revisions = page.items.map(infoOf);
  return page.next_cursor === undefined ? { revisions } : { revisions, next_cursor: page.next_cursor };
}

function revisionQuery(id: string): Sql {
  return sql`SELECT ${INFO_COLUMNS}, content FROM policy_revisions WHERE id = ${id}`;
}

function revisionRecordOf(row: unknown): PolicyRevisionRecord {
  const r = parseStored(recordRowSchema, row, "a policy revision");
  const { content, ...info } = r;
  // Stores hand BLOB/BYTEA columns back as Buffers: the record carries plain bytes.
  return { ...infoOf(info), content: new Uint8Array(content.buffer, content.byteOffset, content.byteLength) };
}

export class SqlPolicyRevisions implements PolicyRevisionStore {
  constructor(private readonly db: SqlAccess) {}

  async archivePolicyRevision(revision: NewPolicyRevision, now: Date = this.db.clock()): Promise<boolean> {
    return (await this.db.execute("archive a policy revision", archiveRevisionQuery(revision, now))) === 1;
  }

  async listPolicyRevisions(limit: number, cursor?: string): Promise<PolicyRevisionPage> {
    const { query, size } = revisionsQuery(limit, cursor);
    return revisionsPageOf(await this.db.rows("list policy revisions", query), size);
  }

  async getPolicyRevision(id: string): Promise<PolicyRevisionRecord | undefined> {
    const [row] = await this.db.rows("read a policy revision", revisionQuery(id));
    return row === undefined ? undefined : revisionRecordOf(row);
  }
}
