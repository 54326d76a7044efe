/**
 * A real gateway archives every revision it loads (at start, and on a watched reload) in its
 * store; reviewers and admins read them over `GET /v1/policy/revisions[/:id]`, nobody else; the
 * operator's `writ policy revisions` lists the same; and each loads back to its own id.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { CommandIo } from "../../src/cli/logs/io.ts";
import { revisionsCommand } from "../../src/cli/policy/revisions.ts";
import { loadRevision, PolicyEngine } from "../../src/policy/index.ts";
import { writeStoreConfig } from "../cli/logs-helpers.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";

let gw: TestGateway;
let tmp: string;
let first: string;
let second: string;
let reloaded: string;

const listSchema = z.object({
  revisions: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(["directory", "bundle"]),
      origin: z.string(),
      loaded_at: z.string(),
      size: z.number(),
      digest: z.string(),
    }),
  ),
  next_cursor: z.string().optional(),
});
const documentSchema = z.object({
  id: z.string(),
  files: z.array(z.object({ path: z.string(), text: z.string() })),
});

beforeAll(async () => {
  gw = await startTestGateway();
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-revisions-e2e-"));
  first = (await gw.health()).policy_revision ?? "";
  await waitFor("the start's revision archived", async () =>
    (await gw.gateway.store.getPolicyRevision(first)) ? true : undefined,
  );
  const source = await readFile(gw.decisionRego, "utf8");
  reloaded = `${source}\n# a comment: another revision\n`;
  await gw.writePolicy(reloaded);
  second = await waitFor(
    "the reload",
    async () => {
      const now = (await gw.health()).policy_revision;
      return now !== null && now !== first ? now : undefined;
    },
    10_000,
  );
  await waitFor("the reload's revision archived", async () =>
    (await gw.gateway.store.getPolicyRevision(second)) ? true : undefined,
  );
}, 60_000);

afterAll(async () => {
  await gw?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("policy revisions of a running gateway", () => {
  it("lists the start's and the reload's revisions to reviewers and admins, newest first", async () => {
    for (const roles of [["reviewer"], ["admin"]]) {
      const answer = await gw.request("GET", "/v1/policy/revisions", {
        token: await gw.token("rita", { roles }),
      });
      expect(answer.status, answer.text).toBe(200);
      const page = listSchema.parse(answer.json);
      expect(page.revisions.map((r) => r.id)).toEqual([second, first]);
      expect(page.revisions[0]).toMatchObject({ kind: "directory", origin: gw.policyDir });
    }
    const paged = await gw.request("GET", "/v1/policy/revisions?limit=1", {
      token: await gw.token("rita", { roles: ["reviewer"] }),
    });
    const page = listSchema.parse(paged.json);
    expect(page.revisions.map((r) => r.id)).toEqual([second]);
    const rest = await gw.request("GET", `/v1/policy/revisions?limit=1&cursor=${page.next_cursor}`, {
      token: await gw.token("rita", { roles: ["reviewer"] }),
    });
    expect(listSchema.parse(rest.json).revisions.map((r) => r.id)).toEqual([first]);
  });

  it("answers one revision with its sources; refuses other roles and unknown ids", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const one = await gw.request("GET", `/v1/policy/revisions/${second}`, { token: reviewer });
    expect(one.status).toBe(200);
    const document = documentSchema.parse(one.json);
    expect(document.files.find((f) => f.path === path.join("writ", "decision.rego"))?.text).toBe(reloaded);

    const developer = await gw.request("GET", "/v1/policy/revisions", { token: await gw.token("alice") });
    expect(developer.status).toBe(403);
    expect(developer.text).toContain("suggested_fix");
    const anonymous = await gw.request("GET", `/v1/policy/revisions/${second}`);
    expect(anonymous.status).toBe(401);
    const unknown = await gw.request("GET", "/v1/policy/revisions/nope", { token: reviewer });
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("writ policy revisions");
  });

  it("loads each archived revision back to its own id", async () => {
    for (const id of [first, second]) {
      const record = await gw.gateway.store.getPolicyRevision(id);
      if (record === undefined) throw new Error(`${id} not archived`);
      expect(await loadRevision(new PolicyEngine(), record)).toBe(id);
    }
  });

  it("writ policy revisions lists them from the store, as a table, as JSON, and one in full", async () => {
    const config = await writeStoreConfig(gw, tmp);
    const run = async (argv: string[]) => {
      const out: string[] = [];
      let err = "";
      const io: CommandIo = {
        out: (line) => {
          out.push(line);
        },
        err: (line) => {
          err += line;
        },
        signal: new AbortController().signal,
      };
      return { code: await revisionsCommand(["--config", config, ...argv], io), out, err };
    };
    const table = await run([]);
    expect(table.code, table.err).toBe(0);
    expect(table.out[0]).toMatch(/^ID\s+LOADED AT\s+KIND\s+SIZE\s+ORIGIN$/);
    expect(table.out.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([second, first]);
    expect(table.out[1]).toContain("directory");

    const json = await run(["--format", "json", "--limit", "1"]);
    expect(listSchema.parse(JSON.parse(json.out.join("\n"))).revisions.map((r) => r.id)).toEqual([second]);
    expect(json.err).toContain("--cursor");

    const one = await run([first]);
    expect(one.code).toBe(0);
    expect(documentSchema.parse(JSON.parse(one.out.join("\n"))).id).toBe(first);
    const absent = await run(["nope"]);
    expect(absent.code).toBe(1);
    expect(absent.err).toContain("no revision nope");
  });
});
