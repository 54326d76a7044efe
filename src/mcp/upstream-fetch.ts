/**
 * The `fetch` Writ's Streamable HTTP client transports send with. The SDK's transport passes its
 * one AbortSignal (aborted when the transport closes) to every request; undici then adds an
 * `abort` listener to that shared signal per request and removes it only when the request is
 * garbage collected. Under load the listeners pile up by the thousand (MaxListenersExceeded
 * warnings past 1,500, and each request counts them all). Each request here gets a signal of its
 * own that follows the shared one (`AbortSignal.any`: no listener on the source), so closing the
 * transport still aborts every request and response body in flight.
 */
export function upstreamFetch(
  send: (input: string | URL | Request, init: RequestInit | undefined) => Promise<Response>,
): typeof fetch {
  return (input, init) => {
    const signal = init?.signal;
    if (signal === undefined || signal === null) return send(input, init);
    return send(input, { ...init, signal: AbortSignal.any([signal]) });
  };
}
