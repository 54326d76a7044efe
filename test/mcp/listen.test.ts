/**
 * `subscriptions/listen` on Writ's /mcp (2026-07-28): an upstream's list change reaches a
 * listening caller only when it changes what that caller may see (the discovery policy), and the
 * stream ends, gracefully, when the caller's token expires. Writ fronts the v2 test upstream
 * (`addArchiveTool()` adds `archive_note`, which the notes policy shows editors only); callers are
 * a real v2 `Client` with its `listChanged` handler and raw HTTP reading the SSE stream.
 */
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { TestGateway } from "../support/gateway.ts";
import { MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";
import type { V2Upstream } from "../support/mcp-v2-upstream.ts";
import { NOTES_POLICY, notesPolicyDir, startNotesOnV2Upstream } from "./notes-fixture.ts";

let policyDir: string;
let upstream: V2Upstream;
let gw: TestGateway;

beforeAll(async () => {
  policyDir = await notesPolicyDir();
  ({ gw, upstream } = await startNotesOnV2Upstream(policyDir));
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await rm(policyDir, { recursive: true, force: true });
});

const messageSchema = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
});

/** The JSON-RPC messages of an SSE body (keep-alive comments skipped). */
function sseMessages(text: string): z.infer<typeof messageSchema>[] {
  return text
    .split("\n\n")
    .flatMap((frame) => frame.split("\n").filter((line) => line.startsWith("data: ")))
    .map((line) => messageSchema.parse(JSON.parse(line.slice("data: ".length))));
}

/** A raw listen stream for tools/list_changed, read until the gateway ends it. */
async function rawListen(
  token: string,
  id: string,
): Promise<{ ended: Promise<string>; done: () => boolean }> {
  const response = await postModern(gw.url, token, {
    id,
    method: "subscriptions/listen",
    params: { notifications: { toolsListChanged: true } },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  let finished = false;
  const ended = response.text().finally(() => {
    finished = true;
  });
  return { ended, done: () => finished };
}

function connectWithListChanged(token: string, onTools: (names: string[]) => void): Promise<Client> {
  const client = new Client(
    { name: "listen-test", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: MODERN_REVISION } },
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (error === null && tools !== null) onTools(tools.map((tool) => tool.name));
          },
        },
      },
    },
  );
  return client
    .connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    .then(() => client);
}

describe("subscriptions/listen", () => {
  it("refuses a listen without a token (401)", async () => {
    const response = await postModern(gw.url, undefined, {
      method: "subscriptions/listen",
      params: { notifications: { toolsListChanged: true } },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("refuses a listen without its filter in-band: -32602 with Writ's error as data", async () => {
    const token = await gw.token("erin", { roles: ["editor"] });
    const response = await postModern(gw.url, token, { method: "subscriptions/listen", params: {} });
    expect(response.headers.get("content-type")).toContain("application/json");
    const answer = z
      .object({
        error: z.object({
          code: z.number(),
          data: z.object({ category: z.string(), suggested_fix: z.string() }),
        }),
      })
      .parse(await response.json());
    expect(answer.error.code).toBe(-32602);
    expect(answer.error.data.category).toBe("invalid_argument");
  });

  it("relays an upstream's new tool to a caller allowed to see it, not to callers it changes nothing for, and ends each stream at its token's exp", async () => {
    const editorTools: string[][] = [];
    const editor = await connectWithListChanged(await gw.token("erin", { roles: ["editor"] }), (names) =>
      editorTools.push(names),
    );
    expect(editor.autoOpenedSubscription?.honoredFilter).toEqual({ toolsListChanged: true });
    const before = (await editor.listTools()).tools.map((tool) => tool.name);
    expect(before).not.toContain("archive_note");

    // A viewer sees the server's read_note but not archive_note; a caller without a role sees
    // nothing of the server. Both tokens expire shortly: their streams end then.
    const exp = Math.floor(Date.now() / 1000) + 8;
    const viewer = await rawListen(await gw.token("vera", { roles: ["viewer"], claims: { exp } }), "v-1");
    const stranger = await rawListen(await gw.token("sam", { roles: [], claims: { exp } }), "s-1");
    const rawEditor = await rawListen(await gw.token("erin", { roles: ["editor"], claims: { exp } }), "e-1");

    await upstream.addArchiveTool();
    await expect
      .poll(() => editorTools.at(-1) ?? [], { timeout: 10_000, interval: 50 })
      .toContain("archive_note");
    // The change reached the editor while the short-lived streams were still open.
    expect(viewer.done()).toBe(false);
    expect(stranger.done()).toBe(false);

    for (const [stream, id] of [
      [viewer, "v-1"],
      [stranger, "s-1"],
    ] as const) {
      const messages = sseMessages(await stream.ended);
      expect(messages.map((m) => m.method ?? "result")).toEqual([
        "notifications/subscriptions/acknowledged",
        "result",
      ]);
      // The spec's graceful end: the empty listen result, naming the subscription.
      expect(messages[1]).toMatchObject({
        id,
        result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID_META_KEY]: id } },
      });
    }
    const edited = sseMessages(await rawEditor.ended);
    expect(edited.map((m) => m.method ?? "result")).toEqual([
      "notifications/subscriptions/acknowledged",
      "notifications/tools/list_changed",
      "result",
    ]);
    expect(edited[1]?.params?._meta).toEqual({ [SUBSCRIPTION_ID_META_KEY]: "e-1" });
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
    await editor.close();
  }, 30_000);

  it("tells a listening caller when a policy reload changes the tools it sees", async () => {
    const viewerTools: string[][] = [];
    const viewer = await connectWithListChanged(await gw.token("vera", { roles: ["viewer"] }), (names) =>
      viewerTools.push(names),
    );
    expect((await viewer.listTools()).tools.map((tool) => tool.name)).not.toContain("archive_note");
    // Viewers become editors: they now see archive_note (the upstream offers it since the test above).
    const promoted = NOTES_POLICY.replace(
      'editor if "editor" in input.subject.roles',
      'editor if {\n\tsome role in input.subject.roles\n\trole in {"editor", "viewer"}\n}',
    );
    expect(promoted).not.toBe(NOTES_POLICY);
    const file = path.join(policyDir, "writ", "decision.rego");
    await writeFile(`${file}.next`, promoted);
    await rename(`${file}.next`, file);
    try {
      await expect
        .poll(() => viewerTools.at(-1) ?? [], { timeout: 15_000, interval: 100 })
        .toContain("archive_note");
    } finally {
      await viewer.close();
    }
  }, 30_000);
});
