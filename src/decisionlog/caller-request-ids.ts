/**
 * The request id a caller sent (`X-Request-Id`), kept beside Writ's own (issue 27). Writ mints
 * the id that keys its records for every request, so that a caller can neither choose it nor
 * copy another caller's; the caller's id, bounded and validated by the HTTP layer, is recorded
 * in each entry the request appends as `caller_request_id`, to find them by.
 *
 * Held by Writ's request id (unique: minted per request) while the request is answered, and read
 * by the log when an entry is appended. Not an AsyncLocalStorage, for the reason `refusals.ts`
 * gives.
 */
const callers = new Map<string, string>();

/** Notes `caller` as the id the caller of request `requestId` sent; the returned function forgets it. */
export function noteCallerRequestId(requestId: string, caller: string): () => void {
  callers.set(requestId, caller);
  return () => {
    callers.delete(requestId);
  };
}

/** The id the caller of request `requestId` sent, while it is answered. */
export function callerRequestIdOf(requestId: string): string | undefined {
  return callers.get(requestId);
}
