/**
 * `writ serve` takes its port before it starts anything: a busy port is one line on stderr and
 * exit 1, and the configured stdio MCP servers (child processes) were never started.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { serveCommand } from "../../src/cli/serve.ts";
import { writeConfigFile } from "../support/config-file.ts";

let dir: string;
let busy: Server;
let busyPort: number;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-serve-"));
  busy = createServer();
  busyPort = await new Promise<number>((resolve) =>
    busy.listen(0, "127.0.0.1", () => {
      const address = busy.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    }),
  );
});

afterAll(async () => {
  await new Promise<void>((resolve) => busy.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe("writ serve on a busy port", () => {
  it("says so in one line, exits 1, and starts no MCP server", async () => {
    const marker = path.join(dir, "mcp-server-started");
    const config = await writeConfigFile(dir, (defaults) => ({
      ...defaults,
      mcp: {
        endpoint: true,
        servers: [
          {
            name: "marker",
            transport: "stdio",
            command: process.execPath,
            args: ["-e", `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "started")`],
          },
        ],
      },
    }));
    const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const out = vi.spyOn(console, "log").mockImplementation(() => undefined);
    let code: number;
    let lines: string[];
    let printed: unknown[][];
    try {
      code = await serveCommand(["--config", config, "--port", String(busyPort)]);
      lines = err.mock.calls.map((c) => c.join(" "));
      printed = out.mock.calls;
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^writ serve: port ${busyPort} on 127\\.0\\.0\\.1 is already in use`),
    );
    expect(lines[0]).toContain("--port");
    expect(lines[0]).not.toContain("\n");
    expect(printed).toEqual([]);
    // Give a child that had been spawned the time to write its marker.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(marker)).toBe(false);
  });
});

describe("writ serve once it listens", () => {
  it("prints where everything is: the API, /console, /mcp, the policy revision and the store", async () => {
    const config = await writeConfigFile(dir);
    const printed: string[] = [];
    const out = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      printed.push(args.join(" "));
    });
    let code: number;
    try {
      const serving = serveCommand(["--config", config, "--port", "0"]);
      for (let i = 0; i < 600 && !printed.some((l) => l.startsWith("  store")); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // What a Ctrl-C does: serve stops and returns.
      process.emit("SIGINT");
      code = await serving;
    } finally {
      out.mockRestore();
    }
    expect(code).toBe(0);
    const url = /^writ listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(printed[0] ?? "")?.[1];
    expect(url, printed.join("\n")).toBeDefined();
    const text = printed.join("\n");
    expect(text).toContain(`  API      ${url}/v1`);
    expect(text).toContain(`  console  ${url}/console`);
    expect(text).toContain(`  MCP      ${url}/mcp`);
    expect(text).toMatch(/ {2}policy {3}revision [0-9a-f]+, writ\/decision from \S+policies/);
    expect(text).toContain(`  store    SQLite ${dir}`);
  });
});
