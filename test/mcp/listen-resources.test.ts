/**
 * Resource updates on `subscriptions/listen` (2026-07-28): Writ fronts the v2 test upstream,
 * whose `notes://board` is governed by `notes.board`, a contract the policy shows editors only.
 * A caller who may read the board and listens for its URI hears the upstream's
 * `notifications/resources/updated`; a viewer listening for it hears nothing; Writ holds the
 * upstream subscription (its own listen with `resourceSubscriptions`) while any stream asks for
 * the URI and drops it when the last one closes. Callers are a real v2 `Client` and raw HTTP.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type TestGateway, waitForMcpServers } from "../support/gateway.ts";
import { BOARD_CONTRACT } from "../support/mcp-notes-board.ts";
import { MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";
import { BOARD_URI, type V2Upstream } from "../support/mcp-v2-upstream.ts";
import { NOTES_POLICY, startNotesOnV2Upstream } from "./notes-fixture.ts";

/** The notes policy, with the board readable by editors only. */
const POLICY = NOTES_POLICY.replace(
  'input.action.name in {"notes.delete", "notes.archive"}',
  'input.action.name in {"notes.delete", "notes.archive", "notes.board"}',
);

let policyDir: string;
let upstream: V2Upstream;
let gw: TestGateway;
/** The test's clients, closed before the gateway (also when a test failed half way). */
const clients: Client[] = [];

beforeAll(async () => {
  expect(POLICY).not.toBe(NOTES_POLICY);
  policyDir = await mkdtemp(path.join(os.tmpdir(), "writ-listen-resources-"));
  await mkdir(path.join(policyDir, "writ"));
  await writeFile(path.join(policyDir, "writ", "decision.rego"), POLICY);
  ({ gw, upstream } = await startNotesOnV2Upstream(policyDir, [BOARD_CONTRACT]));
  await waitForMcpServers(gw);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await gw?.close();
  await upstream?.close();
  await rm(policyDir, { recursive: true, force: true });
});

/** A v2 client on Writ's /mcp that records the resource updates it hears. */
async function listener(token: string): Promise<{ client: Client; updated: string[] }> {
  const client = new Client(
    { name: "listen-resources-test", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: MODERN_REVISION } },
    },
  );
  clients.push(client);
  const updated: string[] = [];
  client.setNotificationHandler("notifications/resources/updated", ({ params }) => {
    updated.push(params.uri);
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return { client, updated };
}

const sseMethods = (text: string): string[] =>
  text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map(
      (line) =>
        z.object({ method: z.string().optional() }).parse(JSON.parse(line.slice(6))).method ?? "result",
    );

describe("subscriptions/listen: resource updates", () => {
  it("relays an upstream's update of a resource to a caller who may read it, not to one whose policy hides it, and drops the upstream subscription with the last stream", async () => {
    const editor = await listener(await gw.token("erin", { roles: ["editor"] }));
    const second = await listener(await gw.token("ed", { roles: ["editor"] }));
    expect((await editor.client.listResources()).resources.map((r) => r.uri)).toContain(BOARD_URI);
    const editorListen = await editor.client.listen({ resourceSubscriptions: [BOARD_URI] });
    expect(editorListen.honoredFilter).toEqual({ resourceSubscriptions: [BOARD_URI] });
    const secondListen = await second.client.listen({ resourceSubscriptions: [BOARD_URI] });

    // A viewer may not read the board: it is not listed to them, and their listen hears nothing of it.
    const viewerToken = await gw.token("vera", {
      roles: ["viewer"],
      claims: { exp: Math.floor(Date.now() / 1000) + 6 },
    });
    const viewerList = await postModern(gw.url, viewerToken, { method: "resources/list" });
    expect(JSON.stringify(await viewerList.json())).not.toContain(BOARD_URI);
    const viewer = await postModern(gw.url, viewerToken, {
      id: "v-1",
      method: "subscriptions/listen",
      params: { notifications: { resourceSubscriptions: [BOARD_URI] } },
    });
    expect(viewer.headers.get("content-type")).toContain("text/event-stream");
    let viewerDone = false;
    const viewerText = viewer.text().finally(() => {
      viewerDone = true;
    });

    // Writ holds one upstream subscription for both editors.
    await expect
      .poll(() => upstream.resourceListens(), { timeout: 10_000, interval: 50 })
      .toEqual([[BOARD_URI]]);
    await upstream.updateBoard();
    await expect.poll(() => editor.updated, { timeout: 10_000, interval: 50 }).toEqual([BOARD_URI]);
    await expect.poll(() => second.updated, { timeout: 10_000, interval: 50 }).toEqual([BOARD_URI]);
    expect(viewerDone).toBe(false);
    expect(sseMethods(await viewerText)).toEqual(["notifications/subscriptions/acknowledged", "result"]);

    // One editor stops listening: the other still hears the board's updates.
    await editorListen.close();
    await upstream.updateBoard();
    await expect
      .poll(() => second.updated, { timeout: 10_000, interval: 50 })
      .toEqual([BOARD_URI, BOARD_URI]);
    expect(upstream.resourceListens()).toEqual([[BOARD_URI]]);

    // The last stream closes: Writ cancels its upstream listen for the board.
    await secondListen.close();
    await expect.poll(() => upstream.resourceListens(), { timeout: 10_000, interval: 50 }).toEqual([]);
    expect(editor.updated).toEqual([BOARD_URI]);
  }, 30_000);
});
