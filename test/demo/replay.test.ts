/**
 * `writ demo` (`npm run demo`) against a real gateway on the default configuration: the repair,
 * each refusal and the payments round print in order, the steps numbered 1, 2, 3… without a gap.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { demoCommand, gatewayUrl } from "../../src/demo/replay.ts";
import { type RunningGateway, startGateway } from "../../src/server.ts";
import { writeConfigFile } from "../support/config-file.ts";
import { freePort } from "../support/ports.ts";

let dir: string;
let configFile: string;
let gateway: RunningGateway;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-demo-"));
  const paymentsPort = await freePort();
  configFile = await writeConfigFile(dir, (defaults) => ({
    ...defaults,
    server: { host: "127.0.0.1", port: 0 },
    // The payments service the demo starts listens where the contracts send their calls.
    tools: JSON.parse(
      JSON.stringify(defaults.tools).replaceAll("127.0.0.1:8081", `127.0.0.1:${paymentsPort}`),
    ),
  }));
  gateway = await startGateway(await loadConfig(configFile));
});

afterAll(async () => {
  await gateway?.close();
  await rm(dir, { recursive: true, force: true });
});

async function demo(argv: string[]): Promise<{ code: number; lines: string[]; err: string }> {
  const out = vi.spyOn(console, "log").mockImplementation(() => undefined);
  const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
  try {
    const code = await demoCommand(argv);
    return {
      code,
      lines: out.mock.calls.flatMap((c) => c.join(" ").split("\n")),
      err: err.mock.calls.map((c) => c.join(" ")).join("\n"),
    };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe("writ demo", () => {
  it("replays the repair, its refusals and the payments round, steps numbered without a gap", async () => {
    const { code, lines, err } = await demo(["--url", gateway.url, "--config", configFile]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const steps = lines.flatMap((line) => {
      const match = /^== (\d+)\. /.exec(line);
      return match ? [Number(match[1])] : [];
    });
    expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
    expect(steps).toHaveLength(9);
    const lineAfter = (title: string) =>
      lines[lines.findIndex((l) => l.startsWith("== ") && l.includes(title)) + 1] ?? "";
    expect(lineAfter("read .env")).toMatch(/repo_read -> deny/);
    // The fix comes from one Code Mode program: its ledger, the refused .env read ending the run.
    const run = lines.slice(lines.findIndex((l) => l.includes("propose the fix in one Code Mode program")));
    expect(run[1]).toMatch(/^ {3}\[0\] repo_search -> allow/);
    expect(run.slice(2, 4).join("\n")).toMatch(/\[1\] repo_read -> allow[\s\S]*\[2\] repo_read -> allow/);
    expect(run[4]).toMatch(/\[3\] repo_propose_edit -> allow, committed/);
    expect(run[5]).toMatch(
      /\[4\] repo_read -> deny \(policy_denied: .env is outside the workspace's readable paths\)/,
    );
    expect(run).toContain("   committed before it ended: [3] repo_propose_edit");
    expect(lines).toContain('   the payments service accepted {"drafts":1,"commits":1}');
    expect(lineAfter(". finish  (alice")).toMatch(/repo\.finish -> allow/);
  });

  it("answers a gateway that is not there with where it looked and how to point it elsewhere", async () => {
    const port = await freePort();
    const { code, err } = await demo(["--url", `http://127.0.0.1:${port}`, "--config", configFile]);
    expect(code).toBe(1);
    expect(err).toContain(`no gateway at http://127.0.0.1:${port}`);
    expect(err).toContain("PORT=<port> npm run demo");
  });

  it("takes --url, else PORT, else the configured port, and refuses what is neither", () => {
    expect(gatewayUrl("http://localhost:9000/", undefined, 8080)).toBe("http://localhost:9000");
    expect(gatewayUrl(undefined, "8737", 8080)).toBe("http://127.0.0.1:8737");
    expect(gatewayUrl(undefined, undefined, 8080)).toBe("http://127.0.0.1:8080");
    expect(String(gatewayUrl("ftp://x", undefined, 8080))).toContain("http or https");
    expect(String(gatewayUrl(undefined, "eighty", 8080))).toContain("PORT must be a port number");
  });
});
