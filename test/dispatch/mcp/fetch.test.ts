/**
 * The fetch of Writ's upstream MCP transports (node:http underneath), over real HTTP on
 * loopback: answers as fetch's (JSON read whole, event streams as they arrive, bodiless statuses,
 * connection failures), no listener left on the transport's shared AbortSignal (undici's pile up
 * by the thousand under load), and aborting that signal ends a request and a body in flight.
 */
import { getEventListeners } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamFetch } from "../../../src/dispatch/mcp/fetch.ts";

let url = "";
let streaming: ServerResponse | undefined;
const received: { method: string | undefined; body: string; headers: Record<string, unknown> }[] = [];
const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => {
    body += chunk.toString("utf8");
  });
  request.on("end", () => {
    received.push({ method: request.method, body, headers: request.headers });
    if (request.url === "/stream") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
      streaming = response;
    } else if (request.url === "/accepted") {
      response.writeHead(202).end();
    } else if (request.url === "/hang") {
      // never answers
    } else {
      response.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" });
      response.end(JSON.stringify({ echoed: body }));
    }
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no port");
  url = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  streaming?.end();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("upstreamFetch", () => {
  it("sends the method, headers and body, and answers status, headers and JSON", async () => {
    const response = await upstreamFetch(`${url}/call`, {
      method: "POST",
      headers: new Headers({ "content-type": "application/json", "x-extra": "yes" }),
      body: '{"text":"héllo"}',
    });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get("mcp-session-id")).toBe("s-1");
    expect(await response.json()).toEqual({ echoed: '{"text":"héllo"}' });
    const last = received.at(-1);
    expect(last?.method).toBe("POST");
    expect(last?.headers["x-extra"]).toBe("yes");
    expect(last?.headers["user-agent"]).toBe("node");
    expect(last?.headers["content-length"]).toBe(String(Buffer.byteLength('{"text":"héllo"}')));
  });

  it("answers a bodiless 202 with a body fetch's callers may cancel", async () => {
    const response = await upstreamFetch(`${url}/accepted`, { method: "POST", body: "{}" });
    expect(response.status).toBe(202);
    await response.body?.cancel();
  });

  it("adds no abort listener per request to the transport's shared signal", async () => {
    const shared = new AbortController();
    for (let i = 0; i < 200; i++) {
      const response = await upstreamFetch(`${url}/call`, {
        method: "POST",
        body: "{}",
        signal: shared.signal,
      });
      expect(response.status).toBe(200);
      await response.text();
    }
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
  });

  it("passes an event stream as it arrives, and aborting the shared signal ends it", async () => {
    const shared = new AbortController();
    const response = await upstreamFetch(`${url}/stream`, { method: "POST", signal: shared.signal });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe("data: first\n\n");
    shared.abort(new Error("the transport closed"));
    await expect(reader?.read()).rejects.toThrow("the transport closed");
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
  });

  it("rejects with the signal's reason when aborted before the answer", async () => {
    const shared = new AbortController();
    const pending = upstreamFetch(`${url}/hang`, { method: "POST", body: "{}", signal: shared.signal });
    setTimeout(() => shared.abort(new Error("closed while waiting")), 20);
    await expect(pending).rejects.toThrow("closed while waiting");
  });

  it("refuses a URL with credentials in it, as fetch does", async () => {
    const target = url.replace("http://", "http://user:secret@");
    await expect(upstreamFetch(`${target}/call`, { method: "POST", body: "{}" })).rejects.toThrow(TypeError);
  });

  it("rejects as fetch does when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const address = closed.address();
    await new Promise((resolve) => closed.close(resolve));
    if (address === null || typeof address === "string") throw new Error("no port");
    const failure = await upstreamFetch(`http://127.0.0.1:${address.port}/mcp`, {
      method: "POST",
      body: "{}",
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TypeError);
    expect(String(failure)).toContain("fetch failed");
  });
});
