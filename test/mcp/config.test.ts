/** The `mcp:` section of the gateway configuration: what `writ config check` refuses and why. */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.ts";
import { configProblems as problems } from "../support/config-file.ts";
import { NOTES_CONTRACTS } from "./notes-fixture.ts";

describe("mcp configuration", () => {
  it("refuses a tool on an MCP server that is not configured, naming where", () => {
    expect(problems({ tools: NOTES_CONTRACTS })).toContain(
      '/tools/0/backend/server: no MCP server named "notes" under mcp.servers:',
    );
  });

  it("takes a canonical resource URI for /mcp, refusing fragments and plain http off loopback", () => {
    expect(
      problems({ mcp: { resource: "https://writ.example.com/mcp", scopes_supported: ["mcp:tools"] } }),
    ).toBe("");
    expect(problems({ mcp: { resource: "http://localhost:8080/mcp" } })).toBe("");
    expect(problems({ mcp: { resource: "https://writ.example.com/mcp#x" } })).toContain("fragment");
    expect(problems({ mcp: { resource: "http://writ.example.com/mcp" } })).toContain("must use https");
    expect(problems({ mcp: { scopes_supported: ['a"b'] } })).toContain("OAuth scope token");
  });

  it("refuses two servers with one name and an HTTP server with unknown credentials", () => {
    const message = problems({
      mcp: {
        servers: [
          { name: "notes", transport: "stdio", command: "node" },
          { name: "notes", transport: "http", url: "https://notes.internal/mcp", credentials_ref: "nope" },
        ],
      },
    });
    expect(message).toContain("/mcp/servers/1/name");
    expect(
      problems({
        mcp: {
          servers: [
            { name: "n", transport: "http", url: "https://notes.internal/mcp", credentials_ref: "nope" },
          ],
        },
      }),
    ).toContain('/mcp/servers/0/credentials_ref: no credentials named "nope"');
    expect(problems({ mcp: { servers: [{ name: "n", transport: "http", url: "ftp://x" }] } })).toContain(
      "/mcp/servers/0/url",
    );
  });

  it("resolves a stdio server's folder against the configuration file's folder", () => {
    const config = parseConfig(
      {
        tools: NOTES_CONTRACTS,
        mcp: {
          servers: [{ name: "notes", transport: "stdio", command: "node", args: ["server.js"], cwd: "mcp" }],
        },
      },
      "/srv/writ",
      "test.yaml",
    );
    expect(config.mcp.endpoint).toBe(true);
    expect(config.mcp.servers[0]).toMatchObject({ cwd: "/srv/writ/mcp", args: ["server.js"], env: {} });
  });
});
