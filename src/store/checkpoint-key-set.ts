/**
 * The checkpoint signing key set kept in the store itself (table `checkpoint_key_set`, one row,
 * both dialects), for configurations without `decision_log.checkpoints.key_file`: every instance
 * on the store signs with the same key, and `writ logs verify` finds its public half there. A
 * replacement is a compare-and-swap on `revision`, so two instances replacing at once take turns.
 */
import { z } from "zod";
import { WritError } from "../core/errors.ts";
import type { KeySetStorage, StoredKeySet } from "../grants/key-storage.ts";
import { parseStored } from "./rows.ts";
import { sql } from "./sql.ts";
import type { SqlRunner } from "./sql-access.ts";

const keySetRowSchema = z.object({ revision: z.number().int().positive(), document: z.string() });

const REPLACE_ATTEMPTS = 5;

export class SqlKeySetStorage implements KeySetStorage {
  readonly description: string;
  readonly #db: SqlRunner;

  constructor(db: SqlRunner, location: string) {
    this.#db = db;
    this.description = `checkpoint key set in the store (${location}, table checkpoint_key_set)`;
  }

  async read(): Promise<StoredKeySet | undefined> {
    const row = await this.#row();
    return row === undefined ? undefined : { text: row.document, stamp: String(row.revision) };
  }

  async create(text: string): Promise<void> {
    await this.#db.execute(
      "store the checkpoint key set",
      sql`INSERT INTO checkpoint_key_set (id, revision, document) VALUES (1, 1, ${text}) ON CONFLICT (id) DO NOTHING`,
    );
  }

  async replace(change: (current: string | undefined) => Promise<string>): Promise<StoredKeySet> {
    for (let attempt = 0; attempt < REPLACE_ATTEMPTS; attempt++) {
      const current = await this.#row();
      const text = await change(current?.document);
      const changed =
        current === undefined
          ? await this.#db.execute(
              "store the checkpoint key set",
              sql`INSERT INTO checkpoint_key_set (id, revision, document) VALUES (1, 1, ${text}) ON CONFLICT (id) DO NOTHING`,
            )
          : await this.#db.execute(
              "replace the checkpoint key set",
              sql`UPDATE checkpoint_key_set SET revision = revision + 1, document = ${text}
               WHERE id = 1 AND revision = ${current.revision}`,
            );
      if (changed === 1) return { text, stamp: String((current?.revision ?? 0) + 1) };
    }
    throw new WritError("conflict", "the checkpoint key set kept changing while it was replaced", {
      retryable: true,
      suggestedFix: "retry: another instance was replacing the checkpoint key set at the same time",
    });
  }

  async stamp(): Promise<string | undefined> {
    const row = await this.#row();
    return row === undefined ? undefined : String(row.revision);
  }

  async #row(): Promise<z.output<typeof keySetRowSchema> | undefined> {
    const [row] = await this.#db.rows(
      "read the checkpoint key set",
      sql`SELECT revision, document FROM checkpoint_key_set WHERE id = 1`,
    );
    return row === undefined ? undefined : parseStored(keySetRowSchema, row, "the checkpoint key set");
  }
}
