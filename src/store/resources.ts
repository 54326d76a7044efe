/**
 * Resources (`resources`): what calls act on, with their owner, tenant, revision and attributes.
 * `ResourceStore` is what reads and writes them; `SqlResources` its SQL, the same in both
 * dialects.
 */
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { jsonText, parseStored } from "./rows.ts";
import { raw, type Sql, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";
import { inScope, type TenantScope } from "./tenancy.ts";

export interface StoredResource {
  type: string;
  id: string;
  owner: string;
  tenant: string;
  /** Increases by one on every change; compared-and-swapped by actions that carry a base. */
  revision: number;
  attributes: Record<string, unknown>;
  updated_at: string;
}

export interface ResourceWrite {
  type: string;
  id: string;
  owner: string;
  tenant: string;
  attributes: Record<string, unknown>;
}

/** The result of a scoped resource write. */
export type ScopedResourceWrite =
  | { ok: true; resource: StoredResource; previous: StoredResource | undefined }
  /** Another tenant holds this (type, id): nothing was written. */
  | { ok: false; reason: "held_by_another_tenant" };

export interface ResourceStore {
  /**
   * The resource, whatever its tenant: for the pipeline (the policy compares tenants itself) and
   * the operator. Administrative surfaces use {@link ResourceStore.getResourceIn}.
   */
  getResource(type: string, id: string): Promise<StoredResource | undefined>;
  /** The resource when it belongs to `scope`; undefined (as if absent) when another tenant holds it. */
  getResourceIn(scope: TenantScope, type: string, id: string): Promise<StoredResource | undefined>;
  /**
   * Creates or replaces a resource within `scope`: with a tenant scope, `resource.tenant` must be
   * that tenant (else `forbidden`), and a (type, id) another tenant holds is refused, atomically.
   */
  putResourceIn(scope: TenantScope, resource: ResourceWrite): Promise<ScopedResourceWrite>;
  /** Creates or replaces a resource; the revision becomes the previous one plus one. */
  putResource(resource: ResourceWrite): Promise<StoredResource>;
  /**
   * Replaces the attributes when the stored revision still equals `expectedRevision`;
   * undefined (nothing written) when it moved.
   */
  updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined>;
}

export const RESOURCE_COLUMNS = raw("type, id, owner, tenant, revision, attributes, updated_at");

const resourceWriteSchema = z
  .object({
    type: z.string().min(1),
    id: z.string().min(1),
    owner: z.string(),
    tenant: z.string(),
    attributes: z.record(z.string(), z.unknown()),
  })
  .strict();

const resourceRowSchema = z.object({
  type: z.string(),
  id: z.string(),
  owner: z.string(),
  tenant: z.string(),
  revision: z.number().int().positive(),
  attributes: z.string(),
  updated_at: z.string(),
});

const resourceAttributesSchema = z.record(z.string(), z.unknown());

/** A resource row (`attributes` as JSON text). */
function resourceOf(row: unknown): StoredResource {
  const r = parseStored(resourceRowSchema, row, "a resource row");
  let attributes: unknown;
  try {
    attributes = JSON.parse(r.attributes);
  } catch {
    attributes = undefined;
  }
  return {
    type: r.type,
    id: r.id,
    owner: r.owner,
    tenant: r.tenant,
    revision: r.revision,
    attributes: parseStored(
      resourceAttributesSchema,
      attributes,
      `the attributes of resource ${r.type}/${r.id}`,
    ),
    updated_at: r.updated_at,
  };
}

function checkExpectedRevision(expectedRevision: number): void {
  if (!Number.isSafeInteger(expectedRevision)) {
    throw new WritError(
      "invalid_argument",
      `expectedRevision must be an integer, got ${String(expectedRevision)}`,
      {
        fieldErrors: [{ path: "/expectedRevision", message: "expected an integer" }],
        suggestedFix: "pass the revision read with getResource",
      },
    );
  }
}

/** A checked resource write and its attributes as JSON text. */
function parseResourceWrite(resource: unknown): {
  resource: z.output<typeof resourceWriteSchema>;
  attributes: string;
} {
  const parsed = resourceWriteSchema.safeParse(resource);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the resource is invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/resource"),
      suggestedFix: "give a non-empty type and id, an owner, a tenant and an attributes object",
    });
  }
  return { resource: parsed.data, attributes: jsonText(parsed.data.attributes, "/resource/attributes") };
}

export class SqlResources implements ResourceStore {
  constructor(private readonly db: SqlAccess) {}

  async getResource(type: string, id: string): Promise<StoredResource | undefined> {
    const [row] = await this.db.rows(
      "read a resource",
      sql`SELECT ${RESOURCE_COLUMNS} FROM resources WHERE type = ${type} AND id = ${id}`,
    );
    return row === undefined ? undefined : resourceOf(row);
  }

  async putResource(resource: ResourceWrite): Promise<StoredResource> {
    return resourceOf(await this.#upsert(resource, raw("")));
  }

  /** Inserts, or replaces a row when `guard` (a ` WHERE …` or nothing) holds: the row, or undefined. */
  async #upsert(resource: ResourceWrite, guard: Sql): Promise<unknown> {
    const { resource: r, attributes } = parseResourceWrite(resource);
    const [row] = await this.db.rows(
      "write a resource",
      sql`INSERT INTO resources (${RESOURCE_COLUMNS})
       VALUES (${r.type}, ${r.id}, ${r.owner}, ${r.tenant}, 1, ${attributes}, ${this.db.clock().toISOString()})
       ON CONFLICT (type, id) DO UPDATE SET owner = excluded.owner, tenant = excluded.tenant,
         attributes = excluded.attributes, updated_at = excluded.updated_at, revision = resources.revision + 1
         ${guard}
       RETURNING ${RESOURCE_COLUMNS}`,
    );
    return row;
  }

  async getResourceIn(scope: TenantScope, type: string, id: string): Promise<StoredResource | undefined> {
    const stored = await this.getResource(type, id);
    return stored !== undefined && inScope(scope, stored.tenant) ? stored : undefined;
  }

  async putResourceIn(scope: TenantScope, resource: ResourceWrite): Promise<ScopedResourceWrite> {
    if ("tenant" in scope && scope.tenant !== resource.tenant) {
      throw new WritError(
        "forbidden",
        `a caller of tenant ${scope.tenant} writes resources of that tenant only`,
        {
          suggestedFix: "omit tenant in the body, or set it to your own tenant",
        },
      );
    }
    const previous = await this.getResource(resource.type, resource.id);
    const expected = previous?.revision ?? 0;
    // One statement: the insert, or the update of a row still at the revision read above and (in
    // a tenant scope) still held by that tenant. No row back: it moved, or another tenant holds it.
    const held = "tenant" in scope ? sql` AND resources.tenant = ${scope.tenant}` : raw("");
    const row = await this.#upsert(resource, sql`WHERE resources.revision = ${expected}${held}`);
    if (row !== undefined) return { ok: true, resource: resourceOf(row), previous };
    const now = await this.getResource(resource.type, resource.id);
    if (now !== undefined && !inScope(scope, now.tenant))
      return { ok: false, reason: "held_by_another_tenant" };
    // A concurrent write moved the revision: try again against what is there now.
    return this.putResourceIn(scope, resource);
  }

  async updateResourceAttributes(
    type: string,
    id: string,
    expectedRevision: number,
    attributes: Record<string, unknown>,
  ): Promise<StoredResource | undefined> {
    checkExpectedRevision(expectedRevision);
    const text = jsonText(attributes, "/attributes");
    const [row] = await this.db.rows(
      "update a resource",
      sql`UPDATE resources SET attributes = ${text}, updated_at = ${this.db.clock().toISOString()}, revision = revision + 1
       WHERE type = ${type} AND id = ${id} AND revision = ${expectedRevision}
       RETURNING ${RESOURCE_COLUMNS}`,
    );
    return row === undefined ? undefined : resourceOf(row);
  }
}
