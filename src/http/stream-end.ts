/**
 * When an answer is over: at once for a plain answer, when its stream ends for an answer still
 * being streamed (an MCP call answered as SSE), so that what belongs to the request (its span, the
 * caller's request id) lasts as long as the request does.
 */
import type { Context } from "hono";

/**
 * Calls `done` once the answer `c.res` holds has been sent (or its reader went away).
 *
 * The content type is read before the body, and the body only of a stream: reading `body` of a
 * plain answer turns @hono/node-server's string-backed response into a web stream, which it then
 * sends by reading the stream (with a timer's wait between reads) instead of writing the string
 * at once. Measured with bench/ab.ts (4 pairs): proposals' req/s 1.11×, p99 at half load 0.79×.
 */
export function afterAnswer(c: Context, done: () => void): void {
  const streamed = c.res.headers.get("content-type")?.startsWith("text/event-stream") === true;
  const body = streamed ? c.res.body : null;
  if (body !== null) c.res = new Response(whenConsumed(body, done), c.res);
  else done();
}

/** The same stream, calling `done` once when it ends, fails or its reader cancels it. */
function whenConsumed(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  const finish = () => {
    if (!finished) done();
    finished = true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          finish();
          controller.close();
        } else controller.enqueue(chunk.value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}
