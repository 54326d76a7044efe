/**
 * `McpUpstreams` against a server speaking 2026-07-28 (the v2 upstream on loopback): the
 * observer of a call gets the server's progress and, because Writ asks for them with the
 * request's log level, its log messages; aborting the observer's signal cancels the call on the
 * server (on this revision the client closes the request's stream).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseToolContracts } from "../../../src/contracts/index.ts";
import type { CallLogMessage, CallProgress } from "../../../src/core/handlers.ts";
import { McpUpstreams } from "../../../src/dispatch/mcp/upstream.ts";
import { waitFor } from "../../support/gateway.ts";
import { startV2Upstream, type V2Upstream } from "../../support/mcp-v2-upstream.ts";

const [watch] = parseToolContracts([
  {
    name: "v2.watch",
    version: "1",
    description: "Watch on the v2 server",
    input_schema: { type: "object", properties: { hang: { type: "boolean" } } },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp", server: "v2", tool: "watch" },
  },
]);

let upstream: V2Upstream;
let upstreams: McpUpstreams;

beforeAll(async () => {
  upstream = await startV2Upstream(() => {
    throw new Error("no grant is checked here");
  });
  upstreams = new McpUpstreams(
    [{ name: "v2", transport: "http", url: upstream.url, protocol_version: "auto" }],
    {
      credentials: { resolve: async () => ({}) },
      connectTimeoutMs: 10_000,
      report: () => undefined,
    },
  );
  await upstreams.start();
}, 30_000);

afterAll(async () => {
  await upstreams?.close();
  await upstream?.close();
});

describe("a call on a 2026-07-28 upstream", () => {
  it("relays the server's progress and log messages to the call's observer", async () => {
    if (watch === undefined) throw new Error("no contract");
    expect(upstreams.status()).toEqual([
      { name: "v2", transport: "http", connected: true, tools: 3, protocol_version: "2026-07-28" },
    ]);
    const progress: CallProgress[] = [];
    const logs: CallLogMessage[] = [];
    const result = await upstreams.call(watch, {}, "grant", "req-1", {
      progress: (update) => progress.push(update),
      log: (message) => logs.push(message),
    });
    expect(result.structuredContent).toEqual({ watched: true });
    expect(progress).toEqual([{ progress: 1, total: 2, message: "half way" }]);
    expect(logs).toEqual([{ level: "info", logger: "watch", data: "watching" }]);
  });

  it("cancels the call on the server when the caller aborts", async () => {
    if (watch === undefined) throw new Error("no contract");
    const abort = new AbortController();
    const running = upstreams.call(watch, { hang: true }, "grant", "req-3", {
      signal: abort.signal,
      progress: () => abort.abort(),
    });
    await expect(running).rejects.toMatchObject({ category: "timeout", retryable: true });
    await waitFor("the server to see the cancellation", async () =>
      upstream.cancelled.count === 1 ? true : undefined,
    );
  });
});
