/**
 * The fuzz harness's tamper check (issue 27): byte-level edits of stored decision log entries,
 * made behind Writ's back in the SQLite file the way someone with the file would make them, must
 * each be caught by `DecisionLog.verify` (what `writ logs verify` runs) at the edited entry.
 *
 * For each of `entries` distinct random entries, one edit is made (a byte replaced, inserted or
 * removed, anywhere in the stored text): the first of its candidate edits the database accepts
 * (SQLite refuses text that is not JSON, as its generated columns read it; those are counted as
 * `refused`). The chain is verified from the entry before it (its prefix verified), and must
 * break exactly there; the original bytes are then put back. After the last edit the whole log
 * must verify again.
 */
import Database from "better-sqlite3";
import fc from "fast-check";
import { z } from "zod";
import type { TestGateway } from "./gateway.ts";

export interface TamperReport {
  /** Entries edited (and restored). */
  edited: number;
  /** Edits verify caught at the edited entry. */
  caught: number;
  /** Candidate edits the database refused (not JSON for its generated columns). */
  refused: number;
  /** Each edit verify missed (or placed elsewhere), with its entry and what verify said. */
  misses: string[];
  /** The whole log verified after every entry was restored. */
  restored: boolean;
}

type ByteEdit =
  | { op: "replace"; at: number; byte: number }
  | { op: "insert"; at: number; byte: number }
  | { op: "remove"; at: number };

/** Any byte, and often JSON's whitespace: an edit that leaves the value as it was, only respelled. */
const anyByte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x20, 0x0a, 0x09, 0x0d));

const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.record({ op: fc.constant("replace" as const), at: fc.nat(), byte: anyByte }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), byte: anyByte }),
  fc.record({ op: fc.constant("remove" as const), at: fc.nat() }),
);

/** `bytes` with `edit` made: always different from `bytes`. */
function applied(bytes: Buffer, edit: ByteEdit): Buffer {
  const at = edit.at % (bytes.length + (edit.op === "insert" ? 1 : 0));
  switch (edit.op) {
    case "replace": {
      const out = Buffer.from(bytes);
      const old = out[at] ?? 0;
      out[at] = edit.byte === old ? (old + 1) % 256 : edit.byte;
      return out;
    }
    case "insert":
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([edit.byte]), bytes.subarray(at)]);
    case "remove":
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
  }
}

const CANDIDATES = 40;
const rowSchema = z.object({ entry: z.instanceof(Buffer), hash: z.string() });

export async function tamperCheck(
  gw: TestGateway,
  sqlitePath: string,
  options: { seed: number; entries: number },
): Promise<TamperReport> {
  const db = new Database(sqlitePath);
  const report: TamperReport = { edited: 0, caught: 0, refused: 0, misses: [], restored: false };
  try {
    const { last } = z
      .object({ last: z.number().int().nullable() })
      .parse(db.prepare("SELECT max(seq) AS last FROM decisions").get());
    if (last === null) return report;
    const [plan] = fc.sample(
      fc.tuple(
        fc.uniqueArray(fc.integer({ min: 1, max: last }), {
          minLength: Math.min(options.entries, last),
          maxLength: Math.min(options.entries, last),
        }),
        fc.array(byteEdit, { minLength: CANDIDATES, maxLength: CANDIDATES }),
      ),
      { seed: options.seed, numRuns: 1 },
    );
    if (plan === undefined) return report;
    const [seqs, edits] = plan;
    const read = db.prepare("SELECT CAST(entry AS BLOB) AS entry, hash FROM decisions WHERE seq = ?");
    const write = db.prepare("UPDATE decisions SET entry = CAST(? AS TEXT) WHERE seq = ?");
    for (const [i, seq] of seqs.entries()) {
      const original = rowSchema.parse(read.get(seq)).entry;
      const prefix = seq > 1 ? { seq: seq - 1, hash: rowSchema.parse(read.get(seq - 1)).hash } : undefined;
      let made: ByteEdit | undefined;
      // The candidates, rotated per entry so entries get different edits.
      for (let k = 0; k < CANDIDATES && made === undefined; k++) {
        const edit = edits[(i + k) % CANDIDATES];
        if (edit === undefined) continue;
        try {
          write.run(applied(original, edit), seq);
          made = edit;
        } catch {
          report.refused += 1;
        }
      }
      if (made === undefined) continue;
      try {
        report.edited += 1;
        const verified = await gw.gateway.log.verify(prefix === undefined ? {} : { after: prefix });
        if (!verified.ok && verified.first_broken.seq === seq) report.caught += 1;
        else
          report.misses.push(
            `entry ${seq}, ${JSON.stringify(made)}: verify said ${JSON.stringify(verified)}`,
          );
      } finally {
        write.run(original, seq);
      }
    }
    report.restored = (await gw.gateway.log.verify()).ok;
    return report;
  } finally {
    db.close();
  }
}
