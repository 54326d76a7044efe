/**
 * Two gateways on one PostgreSQL database (its grant key set shared in the store): a call's
 * approval round starts on one instance and its retry is answered by the other, which accepts
 * the state the first signed; the grant is spent in the shared store, so a retry on the first
 * instance again does not run the call twice. And a real v2 client whose retry goes to the other
 * instance completes its call there. MCP tasks, kept in the store, are answered alike by both.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  CLIENT_CAPABILITIES_META_KEY,
  isInputRequiredResult,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolDiscovery } from "../../src/discovery/index.ts";
import { APPROVAL_INPUT_KEY, callToolRound, type Round } from "../../src/mcp/approval-flow.ts";
import { CancellableCalls } from "../../src/mcp/cancellation.ts";
import type { CallContext } from "../../src/mcp/methods/context.ts";
import { readForEdit, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";

const elicitationSchema = z.object({
  method: z.literal("elicitation/create"),
  params: z.object({ mode: z.literal("url"), url: z.string() }),
});

describe.skipIf(postgresUnavailable !== undefined)("an approval round across two instances", () => {
  let server: TestPostgres;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    server = await startTestPostgres();
    const url = await server.createDatabase("writ_approval_flow");
    const onPostgres = (document: Record<string, unknown>) => ({ ...document, store: { postgres: { url } } });
    a = await startTestGateway({ configure: onPostgres });
    b = await startTestGateway({ configure: onPostgres });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  /** alice's call on `gw` (each test gateway trusts an identity provider of its own). */
  async function contextOn(gw: TestGateway): Promise<CallContext> {
    const authorization = `Bearer ${await gw.token("alice")}`;
    return {
      gw: gw.gateway,
      discovery: new ToolDiscovery(gw.gateway),
      cancellable: new CancellableCalls(gw.gateway.store),
      challenge: {},
      subject: await gw.gateway.identity.verify(authorization),
      authorization,
      requestId: crypto.randomUUID(),
      observer: {},
      requestUrl: `${gw.url}/mcp`,
    };
  }

  it("accepts on one instance the state the other minted, and runs the call once", async () => {
    const args = {
      workspace: WS,
      path: "src/sum.ts",
      base_hash: await readForEdit(a, await a.token("alice"), "src/sum.ts"),
      before: "a - b",
      after: "a + b",
    };
    const round = async (gw: TestGateway, r: Omit<Round, "elicitsUrl">) =>
      callToolRound(
        await contextOn(gw),
        { name: "repo_apply_edit", arguments: args },
        1,
        { elicitsUrl: true, ...r },
        () => Promise.reject(new Error("not a round of the flow")),
      );

    const first = await round(a, {});
    if (!isInputRequiredResult(first) || first.requestState === undefined) {
      throw new Error(`expected input_required, got ${JSON.stringify(first)}`);
    }
    const { url } = elicitationSchema.parse(first.inputRequests?.[APPROVAL_INPUT_KEY]).params;
    const id = decodeURIComponent(url.replace(`${a.url}/console/approvals#approval-`, ""));
    expect(url).toBe(`${a.url}/console/approvals#approval-${encodeURIComponent(id)}`);

    const approved = await b.request("POST", `/v1/approvals/${id}/approve`, {
      token: await b.token("carol", { roles: ["maintainer"] }),
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);

    const retry = {
      requestState: first.requestState,
      inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } },
    };
    const done = await round(b, retry);
    expect(done).not.toHaveProperty("isError");
    expect(await b.repository.read("src/sum.ts")).toContain("a + b");

    const again = z
      .object({
        isError: z.literal(true),
        structuredContent: z.object({ error: z.object({ category: z.string() }) }),
      })
      .parse(await round(a, retry));
    expect(again.structuredContent.error.category).toBe("policy_denied");

    // A state the other instance's keys never signed is refused there too.
    const [header, payload] = first.requestState.split(".");
    const forged = await round(b, { requestState: `${header}.${payload}.AAAA` }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(forged).toBeInstanceOf(ProtocolError);
  });

  it("serves a v2 client's rounds on either instance: the retry on the other runs the call", async () => {
    const aliceOn = { [a.url]: await a.token("alice"), [b.url]: await b.token("alice") };
    const sent: string[] = [];
    /** The client's POSTs: a first round to `a`, a retry (it carries requestState) to `b`. */
    const alternate = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const body = typeof init?.body === "string" ? init.body : "";
      const to = body.includes('"requestState"') ? b : a;
      sent.push(to === a ? "a" : "b");
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${aliceOn[to.url]}`);
      return fetch(new URL(new URL(String(input instanceof Request ? input.url : input)).pathname, to.url), {
        ...init,
        headers,
      });
    };
    const client = new Client(
      { name: "writ-two-instances", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: MODERN_REVISION } }, capabilities: { elicitation: { url: {} } } },
    );
    const carolOnB = await b.token("carol", { roles: ["maintainer"] });
    client.setRequestHandler("elicitation/create", async (request) => {
      const { url } = z.object({ url: z.string() }).parse(request.params);
      const id = decodeURIComponent(url.slice(url.indexOf("#approval-") + "#approval-".length));
      const approved = await b.request("POST", `/v1/approvals/${id}/approve`, { token: carolOnB, body: {} });
      expect(approved.status, approved.text).toBe(200);
      return { action: "accept" };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { fetch: alternate }));
    try {
      const args = {
        workspace: WS,
        path: "src/sum.ts",
        base_hash: await readForEdit(a, aliceOn[a.url] ?? "", "src/sum.ts"),
        before: "a + b",
        after: "b + a",
      };
      const result = await client.callTool({ name: "repo_apply_edit", arguments: args });
      expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
      expect(sent.slice(-2)).toEqual(["a", "b"]);
      expect(await b.repository.read("src/sum.ts")).toContain("b + a");
    } finally {
      await client.close();
    }
  });

  it("keeps MCP tasks in the store: either instance answers tasks/get alike and advances an approval's", async () => {
    const tasks = { [CLIENT_CAPABILITIES_META_KEY]: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
    const taskSchema = z.object({
      taskId: z.string(),
      status: z.string(),
      result: z.object({ isError: z.boolean().optional(), structuredContent: z.unknown() }).optional(),
    });
    const rpc = async (gw: TestGateway, method: string, params: Record<string, unknown>) => {
      const response = await postModern(gw.url, await gw.token("alice"), { method, params, meta: tasks });
      return taskSchema.parse(z.object({ result: z.unknown() }).parse(await response.json()).result);
    };
    const ended = (gw: TestGateway, taskId: string) =>
      waitFor(`task ${taskId} to end`, async () => {
        const task = await rpc(gw, "tasks/get", { taskId });
        return task.status === "completed" ? task : undefined;
      });

    // A read run on a: b answers its tasks/get with the same result.
    const read = await rpc(a, "tools/call", {
      name: "repo_read",
      arguments: { workspace: WS, path: "README.md" },
    });
    expect((await ended(b, read.taskId)).result).toEqual((await ended(a, read.taskId)).result);

    // An edit waiting for approval on a, rejected: b's tasks/get ends it with the refusal.
    const base_hash = await readForEdit(a, await a.token("alice"), "src/sum.ts");
    const edit = { workspace: WS, path: "src/sum.ts", base_hash, before: "a", after: "c" };
    const waiting = await rpc(a, "tools/call", { name: "repo_apply_edit", arguments: edit });
    expect(waiting.status).toBe("working");
    const pending = z
      .object({ approvals: z.array(z.object({ id: z.string(), requester: z.object({ id: z.string() }) })) })
      .parse(
        (
          await a.request("GET", "/v1/approvals?status=pending", {
            token: await a.token("carol", { roles: ["maintainer"] }),
          })
        ).json,
      )
      .approvals.filter((approval) => approval.requester.id === "alice");
    expect(pending).toHaveLength(1);
    const rejected = await a.request("POST", `/v1/approvals/${pending[0]?.id}/reject`, {
      token: await a.token("carol", { roles: ["maintainer"] }),
      body: { reason: "no" },
    });
    expect(rejected.status, rejected.text).toBe(200);
    const done = await rpc(b, "tasks/get", { taskId: waiting.taskId });
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    expect((await rpc(a, "tasks/get", { taskId: waiting.taskId })).result).toEqual(done.result);
  });
});
