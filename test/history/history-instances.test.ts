/**
 * History facts are the store's, shared by every instance: two gateways on one PostgreSQL
 * database, a read in a session on one lets the same session's edit through on the other, while
 * another session is still refused read_first (the default configuration's reads_of_path).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";
import { proposeIn, SUM_READ, sumEdit } from "./two-gateways.ts";

describe.skipIf(postgresUnavailable !== undefined)(
  "history facts across two instances on one PostgreSQL",
  () => {
    let postgres: TestPostgres;
    let a: TestGateway;
    let b: TestGateway;

    beforeAll(async () => {
      postgres = await startTestPostgres();
      const url = await postgres.createDatabase("writ_history");
      const onPostgres = (document: Record<string, unknown>) => ({
        ...document,
        store: { postgres: { url } },
      });
      a = await startTestGateway({ configure: onPostgres });
      b = await startTestGateway({ configure: onPostgres });
    }, 60_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await postgres?.stop();
    });

    it("sees on one instance the reads logged by the other", async () => {
      // Each test gateway trusts its own identity provider: alice has a token for each.
      const onA = await a.token("alice");
      const onB = await b.token("alice");
      const edit = await sumEdit(a, onA);

      const before = await proposeIn(b, onB, "repo.propose_edit", edit, "shared");
      expect(before.reasons.map((r) => r.code)).toEqual(["read_first"]);
      const read = await proposeIn(a, onA, "repo.read", SUM_READ, "shared");
      expect(read.decision).toBe("allow");
      const after = await proposeIn(b, onB, "repo.propose_edit", edit, "shared");
      expect(after.decision).toBe("allow");
      const other = await proposeIn(b, onB, "repo.propose_edit", edit, "another");
      expect(other.reasons.map((r) => r.code)).toEqual(["read_first"]);
    });
  },
);
