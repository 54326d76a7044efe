/**
 * Signed checkpoints of the decision log's head (`checkpoints`; see src/decisionlog/checkpoint.ts)
 * and the checkpoint signing key set kept beside them (checkpoint-key-set.ts).
 * `CheckpointStore` is what stores and reads them; `SqlCheckpoints` its SQL, the same in both
 * dialects.
 */
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { KeySetStorage } from "../grants/key-storage.ts";
import { SqlKeySetStorage } from "./checkpoint-key-set.ts";
import { seqRangeQuery } from "./paging.ts";
import { parseStored } from "./rows.ts";
import { hashSchema } from "./schema.ts";
import { raw, sql } from "./sql.ts";
import type { SqlAccess } from "./sql-access.ts";

/** A signed checkpoint of the decision log's head (see src/decisionlog/checkpoint.ts). */
export interface StoredCheckpoint {
  /** The head's seq when the checkpoint was signed. */
  seq: number;
  /** The hash of the entry at `seq`. */
  hash: string;
  /** ISO 8601 time it was signed. */
  time: string;
  /** The checkpoint key that signed it. */
  kid: string;
  /** The compact JWS of `{seq, hash, time}`: the only part a verifier trusts. */
  jws: string;
}

export interface CheckpointStore {
  /**
   * Stores a signed checkpoint; false (nothing written) when one for that seq exists already:
   * instances that checkpoint the same head keep the first.
   */
  addCheckpoint(checkpoint: StoredCheckpoint): Promise<boolean>;
  /** The checkpoint with the highest seq, or undefined when there is none. */
  latestCheckpoint(): Promise<StoredCheckpoint | undefined>;
  /** Checkpoints in seq order from `fromSeq` (inclusive), at most `limit`. */
  readCheckpoints(fromSeq: number, limit: number): Promise<StoredCheckpoint[]>;
  /**
   * The checkpoint signing key set kept in the store (every instance on it shares the key);
   * used unless `decision_log.checkpoints.key_file` names a file.
   */
  checkpointKeySet(): KeySetStorage;
}

const CHECKPOINT_COLUMNS = raw("seq, hash, time, kid, jws");

const checkpointSchema = z
  .object({
    seq: z.number().int().positive(),
    hash: hashSchema,
    time: z.iso.datetime({ offset: true }),
    kid: z.string().min(1),
    jws: z.string().min(1),
  })
  .strict();

/** A checkpoints row as stored: its columns are checked loosely (the JWS is what verifiers trust). */
function checkpointOf(row: unknown): StoredCheckpoint {
  return parseStored(
    z.object({ seq: z.number().int(), hash: z.string(), time: z.string(), kid: z.string(), jws: z.string() }),
    row,
    "a checkpoint",
  );
}

export class SqlCheckpoints implements CheckpointStore {
  constructor(private readonly db: SqlAccess) {}

  async addCheckpoint(checkpoint: StoredCheckpoint): Promise<boolean> {
    const parsed = checkpointSchema.safeParse(checkpoint);
    if (!parsed.success) {
      throw new WritError("invalid_argument", "the checkpoint is invalid", {
        fieldErrors: fieldErrorsFromZod(parsed.error, "/checkpoint"),
        suggestedFix: "make checkpoints with the Checkpointer (src/decisionlog/checkpoint.ts)",
      });
    }
    const c = parsed.data;
    const changed = await this.db.execute(
      "store a checkpoint",
      sql`INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES (${c.seq}, ${c.hash}, ${c.time}, ${c.kid}, ${c.jws})
       ON CONFLICT (seq) DO NOTHING`,
    );
    return changed === 1;
  }

  async latestCheckpoint(): Promise<StoredCheckpoint | undefined> {
    const [row] = await this.db.rows(
      "read the latest checkpoint",
      sql`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY seq DESC LIMIT 1`,
    );
    return row === undefined ? undefined : checkpointOf(row);
  }

  async readCheckpoints(fromSeq: number, limit: number): Promise<StoredCheckpoint[]> {
    const query = seqRangeQuery("checkpoints", CHECKPOINT_COLUMNS, fromSeq, limit);
    return (await this.db.rows("read checkpoints", query)).map(checkpointOf);
  }

  checkpointKeySet(): KeySetStorage {
    return new SqlKeySetStorage(this.db, this.db.location);
  }
}
