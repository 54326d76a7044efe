/**
 * The fetch of Writ's upstream MCP transports, over real HTTP on loopback: the transport's one
 * shared AbortSignal collects no listener per request (undici's would pile up by the thousand
 * under load), and aborting it still ends a request and a response body in flight.
 */
import { getEventListeners } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamFetch } from "../../src/mcp/upstream-fetch.ts";

let url = "";
let streaming: ServerResponse | undefined;
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    if (request.url === "/stream") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
      streaming = response;
    } else {
      response.end("{}");
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
  it("adds no abort listener per request to the transport's shared signal", async () => {
    const shared = new AbortController();
    const send = upstreamFetch(fetch);
    for (let i = 0; i < 200; i++) {
      const response = await send(`${url}/call`, { method: "POST", body: "{}", signal: shared.signal });
      expect(await response.text()).toBe("{}");
    }
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
  });

  it("still aborts a response body in flight when the shared signal aborts", async () => {
    const shared = new AbortController();
    const response = await upstreamFetch(fetch)(`${url}/stream`, { method: "POST", signal: shared.signal });
    const reader = response.body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe("data: first\n\n");
    shared.abort(new Error("the transport closed"));
    await expect(reader?.read()).rejects.toThrow("the transport closed");
  });

  it("passes a request without a signal as it is", async () => {
    const response = await upstreamFetch(fetch)(`${url}/call`, { method: "POST", body: "{}" });
    expect(await response.text()).toBe("{}");
  });
});
