/**
 * Which revision serves a `/mcp` POST (src/mcp/modern.ts `isModernRequest`): a plain 2025-era
 * request is told apart without the v2 SDK's classification, and for every other POST the SDK
 * decides. Whatever the shortcut answers must be what the SDK's own `isLegacyRequest` answers:
 * every combination below of message shape, `_meta` claim and MCP-Protocol-Version header is
 * classified both ways and compared.
 */
import { SUPPORTED_PROTOCOL_VERSIONS as LEGACY_REVISIONS } from "@modelcontextprotocol/sdk/types.js";
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { isModernRequest, namesNoModernRevision } from "../../src/mcp/modern.ts";
import { envelope, MODERN_REVISION } from "../support/mcp-v2-client.ts";

/** A POST of `body` as JSON, with `version` as its MCP-Protocol-Version header (none: absent). */
function post(body: unknown, version: string | undefined): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(version === undefined ? {} : { "mcp-protocol-version": version }),
    },
    body: JSON.stringify(body),
  });
}

const versions = [
  undefined,
  ...LEGACY_REVISIONS,
  MODERN_REVISION,
  "2099-01-01",
  "not-a-version",
  "2025-11-25, 2026-07-28",
];

const paramsVariants: (Record<string, unknown> | unknown[] | undefined)[] = [
  undefined,
  {},
  [],
  { name: "repo_read", arguments: { path: "README.md" } },
  { name: "repo_read", _meta: { "writ/approval": "apr-1", progressToken: 3 } },
  { _meta: [] },
  { _meta: { [PROTOCOL_VERSION_META_KEY]: "2025-11-25" } },
  { _meta: { [PROTOCOL_VERSION_META_KEY]: 7 } },
  { name: "repo_read", _meta: envelope() },
  { name: "repo_read", _meta: { ...envelope(), [PROTOCOL_VERSION_META_KEY]: "2099-01-01" } },
  { _meta: { [PROTOCOL_VERSION_META_KEY]: MODERN_REVISION } },
  { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
];

/** Messages of every shape: requests, notifications, responses, batches, not JSON-RPC at all. */
function messages(): unknown[] {
  const all: unknown[] = [];
  for (const params of paramsVariants) {
    const withParams = params === undefined ? {} : { params };
    for (const method of ["tools/call", "tools/list", "initialize", "ping", "server/discover"]) {
      all.push({ jsonrpc: "2.0", id: 1, method, ...withParams });
      all.push({ jsonrpc: "2.0", id: "a", method, ...withParams });
    }
    all.push({ jsonrpc: "2.0", method: "notifications/initialized", ...withParams });
    all.push({ jsonrpc: "2.0", id: null, method: "tools/call", ...withParams });
    all.push({ jsonrpc: "1.0", id: 1, method: "tools/call", ...withParams });
    all.push({ id: 1, method: "tools/call", ...withParams });
    all.push({ jsonrpc: "2.0", id: 1, method: "tools/call", result: {}, ...withParams });
    all.push({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      error: { code: 1, message: "x" },
      ...withParams,
    });
  }
  all.push({ jsonrpc: "2.0", id: 1, result: {} });
  all.push({ jsonrpc: "2.0", id: 1, error: { code: -32000, message: "no" } });
  all.push([{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  all.push([]);
  all.push("tools/call", 5, null);
  return all;
}

describe("which revision serves a POST", () => {
  it("agrees with the SDK's isLegacyRequest on every message, claim and header", async () => {
    let shortcut = 0;
    let compared = 0;
    for (const body of messages()) {
      for (const version of versions) {
        // Given the parsed body, neither reads the request's own.
        const request = post(body, version);
        const sdkLegacy = await isLegacyRequest(request, body);
        const label = `${JSON.stringify(body)} with MCP-Protocol-Version ${version ?? "(none)"}`;
        expect(await isModernRequest(request, body), label).toBe(!sdkLegacy);
        if (namesNoModernRevision(request, body)) {
          shortcut++;
          expect(sdkLegacy, label).toBe(true);
        }
        compared++;
      }
    }
    // The shortcut decided a real share of the cases, the SDK the rest.
    expect(shortcut).toBeGreaterThan(100);
    expect(compared - shortcut).toBeGreaterThan(100);
  });

  it("decides a plain 2025-11-25 tools/call without the SDK, and leaves a 2026-07-28 one to it", () => {
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "repo_read", arguments: {} },
    };
    expect(namesNoModernRevision(post(call, "2025-11-25"), call)).toBe(true);
    expect(namesNoModernRevision(post(call, undefined), call)).toBe(true);
    const modern = { ...call, params: { ...call.params, _meta: envelope() } };
    expect(namesNoModernRevision(post(modern, MODERN_REVISION), modern)).toBe(false);
    // A modern header without the envelope is the SDK's to refuse (-32602), not legacy.
    expect(namesNoModernRevision(post(call, MODERN_REVISION), call)).toBe(false);
  });
});
