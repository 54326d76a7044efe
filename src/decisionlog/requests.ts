/**
 * The requests a log's entries are appended for, while each is answered (issue 28: kept by the
 * log, one gateway's, instead of the process). The audit interceptor (`src/http/audit.ts`) opens
 * a request when it starts and closes it once its answer has been sent (a stream's end included);
 * meanwhile the log fills in each entry's `caller_request_id` from it and notes a refusal
 * appended for it, so that a surface that logged its own refusal (the pipeline, tenancy,
 * approvals, the console) is not logged twice by the interceptor.
 *
 * Not an AsyncLocalStorage: one in use makes Node run a promise hook for every promise of the
 * process, a cost every request paid (issue 16). The log knows each append's request id instead.
 * Writ mints that id per request, but a caller of the pipeline may pass the same id on two
 * requests at once: an append whose id is open more than once marks none of them, and each such
 * request then logs its own refusal (a refusal on the record twice rather than none).
 */

/** One request being answered. */
export interface OpenRequest {
  readonly requestId: string;
  /** The id the caller sent (`X-Request-Id`, within bounds), recorded in each entry's `caller_request_id`. */
  readonly callerRequestId: string | undefined;
  /** Whether a refusal (an entry deciding `deny` or `error`) was appended for it so far. */
  readonly refusalLogged: boolean;
  /** Forgets it: entries appended later are no longer linked to it. */
  close(): void;
}

interface Open {
  callerRequestId: string | undefined;
  refusalLogged: boolean;
}

export class OpenRequests {
  readonly #open = new Map<string, Open[]>();

  /** Requests open now (for tests: none is left open once answered). */
  get size(): number {
    return this.#open.size;
  }

  /** Opens request `requestId` (whose caller sent `callerRequestId`, if any) until `close`. */
  open(requestId: string, callerRequestId?: string): OpenRequest {
    const record: Open = { callerRequestId, refusalLogged: false };
    const list = this.#open.get(requestId);
    if (list) list.push(record);
    else this.#open.set(requestId, [record]);
    let closed = false;
    return {
      requestId,
      callerRequestId,
      get refusalLogged() {
        return record.refusalLogged;
      },
      close: () => {
        if (closed) return;
        closed = true;
        const open = this.#open.get(requestId);
        if (open === undefined) return;
        if (open.length === 1) this.#open.delete(requestId);
        else open.splice(open.indexOf(record), 1);
      },
    };
  }

  /** Called by the log for every append: notes a refusal in the request that appended it. */
  noteAppend(parts: { decision: string; request_id: string }): void {
    if (parts.decision !== "deny" && parts.decision !== "error") return;
    const list = this.#open.get(parts.request_id);
    if (list?.length === 1) list[0]!.refusalLogged = true;
  }

  /** The id the caller of request `requestId` sent, while it is answered (the latest opened). */
  callerOf(requestId: string): string | undefined {
    return this.#open.get(requestId)?.at(-1)?.callerRequestId;
  }
}
