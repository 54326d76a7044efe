/**
 * The `Store` contract on PostgreSQL (a throwaway server, see test/support/postgres.ts), and what
 * only PostgreSQL has: migrations racing from several instances, its error mapping.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { GENESIS_HASH } from "../../src/store/index.ts";
import { openStore } from "../../src/store/open.ts";
import { PostgresStore } from "../../src/store/postgres.ts";
import { postgresMigrations } from "../../src/store/postgres-migrations.ts";
import { postgresUnavailable, sql, startTestPostgres, type TestPostgres } from "../support/postgres.ts";
import { expectWritError, storeContract } from "./contract.ts";
import { newEntry } from "./fixtures.ts";

if (postgresUnavailable !== undefined)
  console.warn(`skipping the PostgreSQL store tests: ${postgresUnavailable}`);

describe.skipIf(postgresUnavailable !== undefined)("PostgresStore", () => {
  let server: TestPostgres;
  const opened: PostgresStore[] = [];
  beforeAll(async () => {
    server = await startTestPostgres();
  });
  afterAll(async () => {
    for (const store of opened.splice(0)) await store.close();
    await server?.stop();
  });

  async function open(url: string): Promise<PostgresStore> {
    const store = await PostgresStore.open(url, { maxConnections: 4 });
    opened.push(store);
    return store;
  }

  describe("the Store contract on PostgreSQL", () => {
    let last = "";
    // Each case opens a store on a fresh database: a copy of one migrated once (creating and
    // migrating a database per case cost most of the cases' time). The migrations have their own
    // cases below, on empty databases.
    let migrated: Promise<string> | undefined;
    const migratedTemplate = async () => {
      const url = await server.createDatabase("writ_schema");
      await (await PostgresStore.open(url)).close();
      return url;
    };
    storeContract({
      async open() {
        migrated ??= migratedTemplate();
        last = await server.createDatabase("writ_test", await migrated);
        return open(last);
      },
      openSame: () => open(last),
      async corruptReasons(seq) {
        await sql(
          last,
          `UPDATE decisions SET entry = jsonb_set(entry::jsonb, '{reasons}', '"nope"')::text WHERE seq = $1`,
          [seq],
        );
      },
      async rewriteEntry(seq, edit) {
        const [row] = await sql(last, "SELECT entry FROM decisions WHERE seq = $1", [seq]);
        const { entry } = z.object({ entry: z.string() }).parse(row);
        await sql(last, "UPDATE decisions SET entry = $1 WHERE seq = $2", [edit(entry), seq]);
      },
      async cleanup() {
        for (const store of opened.splice(0)) await store.close();
      },
    });
  });

  describe("openStore", () => {
    it("opens PostgreSQL from the configuration's postgres section, and from WRIT_DATABASE_URL", async () => {
      const url = await server.createDatabase();
      const configured = await openStore({ postgres: { url, max_connections: 2 } }, {});
      try {
        expect(configured).toBeInstanceOf(PostgresStore);
        await configured.appendDecision(newEntry());
        const fromEnv = await openStore({ sqlite: "unused.db" }, { WRIT_DATABASE_URL: url });
        try {
          expect(fromEnv).toBeInstanceOf(PostgresStore);
          expect(await fromEnv.readDecisions(1, 10)).toHaveLength(1);
        } finally {
          await fromEnv.close();
        }
      } finally {
        await configured.close();
      }
    });
  });

  describe("the decision log's appends", () => {
    it("link after the head another instance wrote since this one's last append", async () => {
      const url = await server.createDatabase();
      const [a, b] = [await open(url), await open(url)];
      const appended = [];
      // a writes the head and links after it in one message; b's appends move the head under a.
      for (const store of [a, a, b, a, b, b, a, a]) appended.push(await store.appendDecision(newEntry()));
      appended.push(
        ...(await a.appendDecisions([
          newEntry(),
          newEntry({ reasons: [{ code: "c", message: "m", visible_to_model: false }] }),
        ])),
      );
      expect(appended.map((entry) => entry.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      const read = await b.readDecisions(1, 100);
      expect(read).toEqual(appended);
      for (const [i, entry] of read.entries())
        expect(entry.prev_hash).toBe(i === 0 ? GENESIS_HASH : read[i - 1]?.hash);
      expect(await sql(url, "SELECT code, seq::int AS seq FROM decision_reasons")).toEqual([
        { code: "c", seq: 10 },
      ]);
      // A decision id already in the log is refused whichever way the append goes: c knows the
      // head after its first append (one message), a still takes the locked path after its miss.
      const c = await open(url);
      const first = read[0]?.decision_id ?? "";
      expect((await c.appendDecision(newEntry())).seq).toBe(11);
      await expectWritError(c.appendDecision(newEntry({ decision_id: first })), "conflict");
      await expectWritError(a.appendDecision(newEntry({ decision_id: first })), "conflict");
      expect((await c.appendDecision(newEntry())).seq).toBe(12);
      expect((await a.appendDecision(newEntry())).seq).toBe(13);
    });
  });

  describe("migrations", () => {
    it("applies every version once when several instances start at the same moment", async () => {
      const url = await server.createDatabase();
      const stores = await Promise.all(Array.from({ length: 5 }, () => open(url)));
      await Promise.all(stores.map((store) => store.migrate()));
      const versions = await sql(url, "SELECT version FROM schema_migrations ORDER BY version");
      expect(versions).toEqual(postgresMigrations.map((m) => ({ version: m.version })));
      await Promise.all(stores.map((store) => store.appendDecision(newEntry())));
      expect((await stores[0]?.readDecisions(1, 10))?.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it("refuses a database migrated by a newer release", async () => {
      const url = await server.createDatabase();
      const store = await open(url);
      await sql(url, "INSERT INTO schema_migrations (version, name) VALUES (999, 'future')");
      const error = await expectWritError(store.migrate(), "internal");
      expect(error.message).toMatch(/schema version 999/);
    });

    it("says to migrate when the schema is missing, and refuses to work once closed", async () => {
      const url = await server.createDatabase();
      const store = new PostgresStore(url);
      opened.push(store);
      const error = await expectWritError(store.getResource("repo", "x"), "internal");
      expect(error.suggestedFix).toMatch(/migrate/);
      await store.migrate();
      expect(await store.getResource("repo", "x")).toBeUndefined();
      await store.close();
      await expectWritError(store.getResource("repo", "x"), "internal");
    });
  });

  describe("errors", () => {
    it("is backend_unavailable (retryable) when the server cannot be reached", async () => {
      const store = new PostgresStore("postgres://writ:secret@127.0.0.1:1/writ", { connectTimeoutMs: 1000 });
      opened.push(store);
      const error = await expectWritError(store.getResource("repo", "x"), "backend_unavailable");
      expect(error.retryable).toBe(true);
      expect(error.message).not.toMatch(/secret/);
    });

    it("names a missing database", async () => {
      const url = new URL(server.adminUrl);
      url.pathname = "/no_such_database";
      const error = await expectWritError(PostgresStore.open(url.toString()), "internal");
      expect(error.suggestedFix).toMatch(/create the database/);
    });
  });
});
