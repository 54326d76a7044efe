/**
 * `writ config check` refuses what `writ serve` would refuse: a configuration that parses but
 * whose contracts' JSON Schemas do not compile.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { configCommand } from "../../src/cli/config.ts";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-config-check-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(yaml: string): Promise<{ code: number; out: string; err: string }> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, yaml);
  const out = vi.spyOn(console, "log").mockImplementation(() => undefined);
  const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
  try {
    const code = await configCommand(["check", "--config", file]);
    return {
      code,
      out: out.mock.calls.map((c) => c.join(" ")).join("\n"),
      err: err.mock.calls.map((c) => c.join(" ")).join("\n"),
    };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const tool = (inputSchema: string) => `
tools:
  - name: notes.read
    version: "1"
    description: Read a note
    side_effect: none
    idempotency: natural
    input_schema: ${inputSchema}
    backend: { kind: http, method: GET, url: "http://127.0.0.1:9/notes" }
`;

describe("writ config check", () => {
  it("accepts a configuration whose contracts compile", async () => {
    const answer = await check(tool("{ type: object, properties: { id: { type: string } } }"));
    expect(answer.err).toBe("");
    expect(answer.code).toBe(0);
    expect(answer.out).toContain("1 tool contract(s)");
  });

  it("refuses a contract whose input schema does not compile, naming where", async () => {
    const answer = await check(tool("{ type: object, properties: { id: { type: strung } } }"));
    expect(answer.code).toBe(1);
    expect(answer.err).toContain("/tools/0");
    expect(answer.err).toContain("next:");
  });
});
