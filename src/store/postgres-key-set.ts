/**
 * The grant signing key set in PostgreSQL (table `grant_key_set`, one row): every instance on the
 * database signs with the same current key and publishes the same public keys, and a rotation is
 * one transaction that holds the row lock, so two instances rotating at once take turns.
 */
import type pg from "pg";
import { z } from "zod";
import type { KeySetStorage, StoredKeySet } from "../grants/key-storage.ts";
import { postgresStoreError } from "./postgres-errors.ts";
import { parseStored } from "./rows.ts";

const keySetRowSchema = z.object({ revision: z.number().int().positive(), document: z.string() });
const revisionRowSchema = z.object({ revision: z.number().int().positive() });

export class PostgresKeySetStorage implements KeySetStorage {
  readonly description: string;
  readonly #pool: pg.Pool;
  readonly #location: string;

  constructor(pool: pg.Pool, location: string) {
    this.#pool = pool;
    this.#location = location;
    this.description = `grant key set in PostgreSQL (${location}, table grant_key_set)`;
  }

  async read(): Promise<StoredKeySet | undefined> {
    const rows = await this.#query("read the grant key set", "SELECT revision, document FROM grant_key_set");
    return rows[0] === undefined ? undefined : stored(rows[0]);
  }

  async create(text: string): Promise<void> {
    await this.#query(
      "store the grant key set",
      "INSERT INTO grant_key_set (id, revision, document) VALUES (1, 1, $1) ON CONFLICT (id) DO NOTHING",
      [text],
    );
  }

  async replace(change: (current: string | undefined) => Promise<string>): Promise<StoredKeySet> {
    const what = "rotate the grant signing keys";
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw postgresStoreError(error, what, this.#location);
    }
    try {
      await client.query("BEGIN");
      const current = (await client.query("SELECT revision, document FROM grant_key_set FOR UPDATE")).rows[0];
      const text = await change(current === undefined ? undefined : stored(current).text);
      const rows = (
        await client.query(
          `INSERT INTO grant_key_set (id, revision, document) VALUES (1, 1, $1)
           ON CONFLICT (id) DO UPDATE SET revision = grant_key_set.revision + 1, document = excluded.document,
             updated_at = now()
           RETURNING revision, document`,
          [text],
        )
      ).rows;
      await client.query("COMMIT");
      return stored(rows[0]);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw postgresStoreError(error, what, this.#location);
    } finally {
      client.release();
    }
  }

  async stamp(): Promise<string | undefined> {
    const rows = await this.#query("check the grant key set", "SELECT revision FROM grant_key_set");
    return rows[0] === undefined
      ? undefined
      : String(parseStored(revisionRowSchema, rows[0], "the grant key set").revision);
  }

  async #query(what: string, sql: string, params: unknown[] = []): Promise<unknown[]> {
    try {
      return (await this.#pool.query(sql, params)).rows;
    } catch (error) {
      throw postgresStoreError(error, what, this.#location);
    }
  }
}

function stored(row: unknown): StoredKeySet {
  const parsed = parseStored(keySetRowSchema, row, "the grant key set");
  return { text: parsed.document, stamp: String(parsed.revision) };
}
