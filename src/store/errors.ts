/** Errors a store raises beyond the plain `WritError` categories. */
import { WritError } from "../core/errors.ts";

/**
 * A stored decision-log row that does not parse (bad JSON, a field of the wrong shape): the file
 * was changed outside Writ. Carries the row's `seq` so that verification can say where the log
 * breaks.
 */
export class UnreadableEntryError extends WritError {
  readonly seq: number;
  readonly decisionId: string | null;

  constructor(seq: number, decisionId: string | null, detail: string, cause?: unknown) {
    super("internal", `decision log entry seq ${seq} is unreadable: ${detail}`, {
      suggestedFix:
        "the row was changed outside Writ: run the decision log's verify to find the first broken entry, then restore the database from a backup",
      cause,
    });
    this.name = "UnreadableEntryError";
    this.seq = seq;
    this.decisionId = decisionId;
  }
}
