/**
 * The `fetch` Writ's Streamable HTTP client transports send with: the requests the SDK's
 * transport makes (a POST of one JSON string, the GET of its event stream, the DELETE of its
 * session) over `node:http`/`node:https` with keep-alive agents, about half the CPU of undici's
 * WHATWG fetch per call (one of these per tools/call through Writ). Anything else (a `Request`
 * object, a body that is not a string) goes to the global fetch.
 *
 * It also keeps the transport's one shared AbortSignal (aborted when the transport closes) clean:
 * undici adds an `abort` listener to it per request and removes it only when the request is
 * garbage collected, so under load they pile up by the thousand (MaxListenersExceeded warnings
 * past 1,500, and each request counts them all). Here a request listens while it runs, and stops
 * when its answer has been read (or failed); aborting the signal ends a request and a response
 * body in flight.
 *
 * Answers as fetch's: a JSON (or any non-stream) answer is read whole, an event stream is passed
 * as it arrives; no redirect is followed (the SDK follows them itself, within the origin); a
 * connection failure rejects with `TypeError("fetch failed")` and the cause, an abort with the
 * signal's reason.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";

const agents = {
  "http:": new HttpAgent({ keepAlive: true }),
  "https:": new HttpsAgent({ keepAlive: true }),
};

/** Statuses whose answers have no body (fetch's "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function headersOf(message: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    if (name === undefined || value === undefined) continue;
    try {
      headers.append(name, value);
    } catch {
      // A header fetch could not represent either: left out.
    }
  }
  return headers;
}

function failed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

/** One request over node:http(s); see the module's comment. */
export function upstreamFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const body = init?.body;
  if (input instanceof Request || (body !== undefined && body !== null && typeof body !== "string")) {
    return fetch(input, init);
  }
  const url = new URL(input);
  // fetch refuses a URL with credentials in it; node:http would send them: left to fetch.
  if (url.username !== "" || url.password !== "") return fetch(input, init);
  const agent =
    url.protocol === "http:" ? agents["http:"] : url.protocol === "https:" ? agents["https:"] : undefined;
  if (agent === undefined) return fetch(input, init);
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const method = (init?.method ?? "GET").toUpperCase();
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  // As fetch sends them when not set.
  headers["user-agent"] ??= "node";
  headers.accept ??= "*/*";
  if (typeof body === "string") headers["content-length"] = String(Buffer.byteLength(body));

  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    let answer: IncomingMessage | undefined;
    const onAbort = () => {
      const reason: unknown = signal?.reason;
      request.destroy();
      answer?.destroy(reason instanceof Error ? reason : undefined);
      if (!settled) {
        settled = true;
        reject(reason);
      }
    };
    const done = () => signal?.removeEventListener("abort", onAbort);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, { method, headers, agent }, (response) => {
      answer = response;
      const status = response.statusCode ?? 500;
      const init = { status, statusText: response.statusMessage ?? "", headers: headersOf(response) };
      const streamed =
        init.headers.get("content-type")?.toLowerCase().startsWith("text/event-stream") === true;
      if (method === "HEAD" || NULL_BODY.has(status)) {
        response.resume();
        response.once("close", done);
        settled = true;
        resolve(new Response(null, init));
      } else if (streamed) {
        response.once("close", done);
        settled = true;
        resolve(new Response(Readable.toWeb(response), init));
      } else {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.once("end", () => {
          done();
          if (settled) return;
          settled = true;
          resolve(new Response(Buffer.concat(chunks), init));
        });
        response.once("error", (error) => {
          done();
          if (settled) return;
          settled = true;
          reject(failed(error));
        });
      }
    });
    request.once("error", (error) => {
      done();
      if (settled) return;
      settled = true;
      reject(failed(error));
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    request.end(body ?? undefined);
  });
}
