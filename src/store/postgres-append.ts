/**
 * The PostgreSQL decision log's append: one global chain across instances. An append takes a
 * transaction-scoped advisory lock, reads the head (seq, hash) and inserts after it, so seq has
 * no gaps and every entry links to the one before it, whichever instance wrote either; while this
 * instance wrote the head itself, the lock and the inserts go in one message.
 */
import pg from "pg";
import { z } from "zod";
import { chainAfter, HEAD_SQL, type PreparedEntry, prepareEntries, reasonRows } from "./chain.ts";
import type { DecisionLogEntry, NewDecisionEntry } from "./decision-entry.ts";
import { duplicateDecision } from "./decisions.ts";
import { batchHistoryRows, type HistoryRow, upsertHistoryText } from "./history.ts";
import { postgresUnique } from "./postgres-errors.ts";

/** The decision log's advisory lock key (a 64-bit number no other application on the database uses). */
const DECISION_LOG_LOCK = 7_283_640_002;

/** BEGIN, the log's lock (held to COMMIT) and its head, in one message. */
const LOCK_AND_READ_HEAD = `BEGIN; SELECT pg_advisory_xact_lock(${DECISION_LOG_LOCK}); ${HEAD_SQL}`;

/** A batch of chained entries and their reason codes, in one statement. */
const INSERT_DECISIONS = `WITH inserted AS (
  INSERT INTO decisions (seq, entry, prev_hash, hash)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
  RETURNING seq
)
INSERT INTO decision_reasons (code, seq)
SELECT code, seq FROM unnest($5::text[], $6::bigint[]) AS reason(code, seq)
ON CONFLICT DO NOTHING`;

/** Appends that take the locked path at once after one that met another instance's entry. */
const LOCKED_AFTER_MISS = 16;

/**
 * Inserts entries chained after the head this instance knows, with the log's lock, in one
 * message: node-postgres sends a query without parameters as one simple-protocol message, which
 * PostgreSQL runs as one transaction (values are quoted with the client's own `escapeLiteral`).
 * False, with nothing written, when another instance's entry already holds the first seq.
 */
async function appendAfterKnownHead(
  client: pg.PoolClient,
  stored: readonly DecisionLogEntry[],
  prepared: readonly PreparedEntry[],
  history: readonly HistoryRow[],
): Promise<boolean> {
  const text = (value: string) => client.escapeLiteral(value);
  const rows = stored.map(
    (entry, i) =>
      `(${entry.seq}, ${text(prepared[i]?.text ?? "")}, ${text(entry.prev_hash)}, ${text(entry.hash)})`,
  );
  const codes = reasonRows(stored, prepared).map((r) => `(${text(r.code)}, ${r.seq})`);
  const statements = [
    `SELECT pg_advisory_xact_lock(${DECISION_LOG_LOCK})`,
    `INSERT INTO decisions (seq, entry, prev_hash, hash) VALUES ${rows.join(", ")}`,
    ...(codes.length === 0
      ? []
      : [`INSERT INTO decision_reasons (code, seq) VALUES ${codes.join(", ")} ON CONFLICT DO NOTHING`]),
    ...(history.length === 0 ? [] : [upsertHistoryText(history, text)]),
  ];
  try {
    await client.query(statements.join("; "));
    return true;
  } catch (error) {
    if (error instanceof pg.DatabaseError && postgresUnique(error) && error.constraint === "decisions_pkey")
      return false;
    throw appendError(error);
  }
}

/** A failed insert of entries: a decision id already in the log is the caller's conflict. */
function appendError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError && postgresUnique(error)) {
    const id = /\(decision_id\)=\((.*)\)/.exec(error.detail ?? "")?.[1];
    return duplicateDecision(id ?? "(one of the batch)", error);
  }
  return error;
}

const queryResultsSchema = z.array(z.object({ rows: z.array(z.unknown()) }));

/** The rows of the last statement of a multi-statement query (node-postgres answers with an array). */
export function headRows(results: unknown): unknown[] {
  const parsed = queryResultsSchema.safeParse(results);
  if (!parsed.success)
    throw new Error("node-postgres did not answer a multi-statement query with its results");
  return parsed.data.at(-1)?.rows ?? [];
}

/** Runs `work` on a pooled connection, failures as `WritError`s that say they happened trying `what`. */
export type WithClient = <T>(what: string, work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

export class PostgresAppender {
  readonly #withClient: WithClient;
  /** The head of the log as this instance last wrote or read it under the lock. */
  #head: { seq: number; hash: string } | undefined;
  /** Appends left to take the locked path at once (after another instance's append was met). */
  #lockedAppends = 0;

  constructor(withClient: WithClient) {
    this.#withClient = withClient;
  }

  /**
   * Appends several entries in one transaction (one commit for all of them), after the global
   * head of the log: the advisory lock makes appends from every instance take turns.
   *
   * When this instance wrote the head itself, the entries are linked after it and sent with the
   * lock in one message (one round trip); if another instance appended meanwhile, the insert
   * meets its seq (the primary key), nothing is written, and the append takes the locked path:
   * BEGIN with the lock and the head, the inserts, COMMIT. After such a miss the next appends
   * take the locked path at once, for a while, since other instances are writing.
   */
  async append(entries: readonly NewDecisionEntry[]): Promise<DecisionLogEntry[]> {
    const prepared = prepareEntries(entries);
    if (prepared.length === 0) return [];
    const head = this.#head;
    if (head !== undefined && this.#lockedAppends === 0) {
      const stored = chainAfter(head, prepared);
      const history = batchHistoryRows(
        entries.map((entry) => entry.history),
        stored,
      );
      const linked = await this.#withClient("append to the decision log", (client) =>
        appendAfterKnownHead(client, stored, prepared, history),
      );
      if (linked) {
        this.#head = stored.at(-1);
        return stored;
      }
      this.#lockedAppends = LOCKED_AFTER_MISS;
    }
    if (this.#lockedAppends > 0) this.#lockedAppends--;
    const stored = await this.#appendUnderLock(prepared, entries);
    this.#head = stored.at(-1);
    return stored;
  }

  /** BEGIN with the lock and the head, the inserts, COMMIT: three round trips hold the lock. */
  #appendUnderLock(
    prepared: readonly PreparedEntry[],
    entries: readonly NewDecisionEntry[],
  ): Promise<DecisionLogEntry[]> {
    return this.#withClient("append to the decision log", async (client) => {
      let committed = false;
      try {
        const head = headRows(await client.query(LOCK_AND_READ_HEAD))[0];
        const stored = chainAfter(head, prepared);
        const codes = reasonRows(stored, prepared);
        try {
          await client.query({
            name: "writ_append_decisions",
            text: INSERT_DECISIONS,
            values: [
              stored.map((entry) => entry.seq),
              prepared.map((entry) => entry.text),
              stored.map((entry) => entry.prev_hash),
              stored.map((entry) => entry.hash),
              codes.map((c) => c.code),
              codes.map((c) => c.seq),
            ],
          });
        } catch (error) {
          throw appendError(error);
        }
        const history = batchHistoryRows(
          entries.map((entry) => entry.history),
          stored,
        );
        if (history.length > 0)
          await client.query(upsertHistoryText(history, (v) => client.escapeLiteral(v)));
        await client.query("COMMIT");
        committed = true;
        return stored;
      } finally {
        if (!committed) await client.query("ROLLBACK").catch(() => {});
      }
    });
  }
}
