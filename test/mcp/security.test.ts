/**
 * /mcp's transport security and authorization discovery, over real HTTP on loopback:
 * - DNS-rebinding protection: a Host or Origin that is not allowed gets 403 before anything runs;
 * - a 401 names the protected resource metadata (RFC 9728), from which a client that follows the
 *   MCP authorization spec (the SDK's own discovery functions) finds the authorization server;
 * - protocol versions: negotiated at initialize, and MCP-Protocol-Version checked afterwards.
 */
import { request as httpRequest } from "node:http";
import {
  discoverOAuthProtectedResourceMetadata,
  extractResourceMetadataUrl,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { startTestGateway, TEST_ISSUER, type TestGateway } from "../support/gateway.ts";
import { postMcp } from "../support/mcp-client.ts";

let gw: TestGateway;
let configured: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
  configured = await startTestGateway({
    configure: (document) => ({
      ...document,
      mcp: {
        ...z.record(z.string(), z.unknown()).parse(document.mcp ?? {}),
        allowed_hosts: ["127.0.0.1", "writ.internal"],
        allowed_origins: ["https://console.example:8443"],
      },
    }),
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await configured?.close();
});

const listTools = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

/** A raw POST to /mcp with the headers a browser or a rebinding page would send. */
function post(
  base: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL("/mcp", base);
  const body = JSON.stringify(listTools);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString("utf8");
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const refusal = z.object({
  jsonrpc: z.literal("2.0"),
  error: z.object({ code: z.number(), message: z.string(), data: writErrorSchema }),
  id: z.null(),
});

describe("DNS-rebinding protection of /mcp", () => {
  it("refuses a Host that is not loopback with 403, and an Origin that is not allowed", async () => {
    const token = await gw.token("alice");
    const rebinding = await post(gw.url, { host: "evil.example", authorization: `Bearer ${token}` });
    expect(rebinding.status).toBe(403);
    expect(refusal.parse(JSON.parse(rebinding.body)).error.data.category).toBe("forbidden");

    const page = await post(gw.url, { origin: "http://evil.example", authorization: `Bearer ${token}` });
    expect(page.status).toBe(403);
    expect(refusal.parse(JSON.parse(page.body)).error.message).toContain("http://evil.example");
  });

  it("answers loopback hosts and pages, and callers that send no Origin", async () => {
    const token = await gw.token("alice");
    const variants: Record<string, string>[] = [
      {},
      { origin: "http://localhost:5173" },
      { host: "localhost" },
    ];
    for (const headers of variants) {
      const answer = await post(gw.url, { authorization: `Bearer ${token}`, ...headers });
      expect(answer.status).toBe(200);
    }
  });

  it("follows the configured allow-lists", async () => {
    const token = await configured.token("alice");
    const auth = { authorization: `Bearer ${token}` };
    expect((await post(configured.url, { ...auth, host: "writ.internal:443" })).status).toBe(200);
    expect((await post(configured.url, { ...auth, host: "localhost" })).status).toBe(403);
    expect((await post(configured.url, { ...auth, origin: "https://console.example:8443" })).status).toBe(
      200,
    );
    expect((await post(configured.url, { ...auth, origin: "https://console.example" })).status).toBe(403);
  });
});

/** A raw GET (node:http, which sends the Host given). */
function get(
  base: string,
  route: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(route, base), { method: "GET", headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the endpoint's protected resource metadata (issue 27)", () => {
  const routes = ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"];

  it("answers only the Hosts /mcp answers: never a resource named after a Host it refuses", async () => {
    for (const route of routes) {
      const answer = await get(gw.url, route, { host: "evil.example" });
      expect(answer.status, route).toBe(403);
      expect(answer.body).not.toContain("http://evil.example/mcp");
      expect(writErrorSchema.parse(JSON.parse(answer.body))).toMatchObject({ category: "forbidden" });
      // An allowed Host is named as before.
      const loopback = await get(gw.url, route, { host: "localhost:8080" });
      expect(loopback.status).toBe(200);
      expect(JSON.parse(loopback.body)).toMatchObject({ resource: "http://localhost:8080/mcp" });
    }
    const allowed = await get(configured.url, routes[0] ?? "", { host: "writ.internal" });
    expect(JSON.parse(allowed.body)).toMatchObject({ resource: "http://writ.internal/mcp" });
    expect((await get(configured.url, routes[0] ?? "", { host: "localhost" })).status).toBe(403);
  });
});

describe("authorization discovery from a 401", () => {
  it("leads a spec-following client from the 401 to the authorization server", async () => {
    const answer = await fetch(`${gw.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(listTools),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toBe(
      `Bearer realm="writ", resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const metadataUrl = extractResourceMetadataUrl(answer);
    expect(metadataUrl?.href).toBe(`${gw.url}/.well-known/oauth-protected-resource/mcp`);
    const metadata = await discoverOAuthProtectedResourceMetadata(`${gw.url}/mcp`, {
      ...(metadataUrl ? { resourceMetadataUrl: metadataUrl } : {}),
    });
    expect(metadata.resource).toBe(`${gw.url}/mcp`);
    expect(metadata.authorization_servers).toEqual([TEST_ISSUER]);
    // The root variant answers the same document.
    const root = await fetch(`${gw.url}/.well-known/oauth-protected-resource`);
    expect(await root.json()).toEqual(metadata);
  });
});

describe("protocol versions", () => {
  async function postJson(body: unknown, headers: Record<string, string>) {
    const answer = await postMcp(gw.url, await gw.token("alice"), body, { headers });
    return { status: answer.status, json: z.record(z.string(), z.unknown()).parse(await answer.json()) };
  }
  const initialize = (protocolVersion: string) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "test", version: "1" } },
  });
  const negotiated = z.object({ result: z.object({ protocolVersion: z.string() }) });

  it("answers initialize with the client's version when Writ supports it, else with its latest", async () => {
    for (const version of [LATEST_PROTOCOL_VERSION, "2025-06-18", "2025-03-26"]) {
      const answer = await postJson(initialize(version), {});
      expect(answer.status).toBe(200);
      expect(negotiated.parse(answer.json).result.protocolVersion).toBe(version);
    }
    const future = await postJson(initialize("2099-01-01"), {});
    expect(negotiated.parse(future.json).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
  });

  it("checks MCP-Protocol-Version on every later request", async () => {
    const supported = await postJson(listTools, { "mcp-protocol-version": "2025-06-18" });
    expect(supported.status).toBe(200);
    const unsupported = await postJson(listTools, { "mcp-protocol-version": "1999-01-01" });
    expect(unsupported.status).toBe(400);
    expect(JSON.stringify(unsupported.json)).toContain("Unsupported protocol version");
    const refused = z.object({ error: z.object({ data: writErrorSchema }) }).parse(unsupported.json);
    expect(refused.error.data.suggested_fix).toContain("MCP-Protocol-Version");
  });
});

describe("errors the MCP SDK answers by itself", () => {
  it("carry Writ's structured error too: an unknown method, a GET", async () => {
    const token = await gw.token("alice");
    const unknown = await postMcp(gw.url, token, {
      jsonrpc: "2.0",
      id: 9,
      method: "roots/list",
      params: {},
    });
    const answer = z
      .object({ error: z.object({ code: z.number(), data: writErrorSchema }) })
      .parse(await unknown.json());
    expect(answer.error.code).toBe(-32601);
    expect(answer.error.data.category).toBe("not_found");
    expect(answer.error.data.suggested_fix).toContain("tools/call");

    const get = await fetch(`${gw.url}/mcp`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect(refusal.parse(await get.json()).error.data.category).toBe("invalid_argument");
  });

  it("answers malformed initialize params with -32602 and field errors, not an internal error", async () => {
    const answer = await postMcp(gw.url, await gw.token("alice"), {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: 7 },
    });
    const body = z
      .object({ error: z.object({ code: z.number(), message: z.string(), data: writErrorSchema }) })
      .parse(await answer.json());
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).not.toContain("[\n");
    expect(body.error.data.field_errors.length).toBeGreaterThan(0);
  });
});
