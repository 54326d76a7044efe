/**
 * Call cancellations (`call_cancellations`): a caller's MCP `notifications/cancelled` that
 * reached another instance than the one running the call, kept until it expires.
 * `CancellationStore` is what records and reads them; `SqlCancellations` its SQL, the same in
 * both dialects.
 */
import { z } from "zod";
import { join, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

export interface CancellationStore {
  /**
   * Asks whichever instance runs the call named `key` to cancel it: a caller's MCP
   * `notifications/cancelled` that reached another instance. Kept until `expiresAt`.
   */
  requestCancellation(key: string, reason: string | undefined, expiresAt: Date): Promise<void>;
  /** The cancellations asked for among `keys` (not expired), each with its reason. */
  requestedCancellations(keys: readonly string[]): Promise<Map<string, string | undefined>>;
}

const cancellationRowSchema = z.object({ key: z.string(), reason: z.string().nullable() });

export class SqlCancellations implements CancellationStore {
  constructor(private readonly db: SqlAccess) {}

  async requestCancellation(key: string, reason: string | undefined, expiresAt: Date): Promise<void> {
    const now = this.db.clock().getTime();
    await this.db.execute(
      "record a cancellation",
      sql`DELETE FROM call_cancellations WHERE expires_at <= ${now}`,
    );
    await this.db.execute(
      "record a cancellation",
      sql`INSERT INTO call_cancellations (key, reason, expires_at) VALUES (${key}, ${reason ?? null}, ${expiresAt.getTime()})
       ON CONFLICT (key) DO UPDATE SET reason = excluded.reason, expires_at = excluded.expires_at`,
    );
  }

  async requestedCancellations(keys: readonly string[]): Promise<Map<string, string | undefined>> {
    const found = new Map<string, string | undefined>();
    if (keys.length === 0) return found;
    const rows = await this.db.rows(
      "read cancellations",
      sql`SELECT key, reason FROM call_cancellations
       WHERE key IN (${join(
         keys.map((key) => sql`${key}`),
         ", ",
       )}) AND expires_at > ${this.db.clock().getTime()}`,
    );
    for (const row of rows) {
      const parsed = cancellationRowSchema.safeParse(row);
      if (parsed.success) found.set(parsed.data.key, parsed.data.reason ?? undefined);
    }
    return found;
  }
}
