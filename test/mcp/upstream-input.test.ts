/**
 * An upstream's `input_required` rounds forwarded through Writ (src/mcp/upstream-input.ts,
 * src/dispatch/mcp/input-required.ts): the v2 test upstream's `label_note` asks for a label with a
 * form elicitation; a real v2 client of Writ's /mcp answers it with its elicitation handler, and
 * each round is a call of its own through the pipeline (a fresh grant) carrying the caller's
 * answer and the upstream's state. A state bound to another call is refused; a 2025-11-25 caller
 * gets a clear refusal, not a hang.
 */
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { TestGateway } from "../support/gateway.ts";
import { MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";
import type { V2Upstream } from "../support/mcp-v2-upstream.ts";
import { NOTES_POLICY, notesPolicyDir, startNotesOnV2Upstream } from "./notes-fixture.ts";

const LABEL_CONTRACT = {
  name: "notes.label",
  version: "1",
  description: "Label a note (the server asks which label)",
  input_schema: {
    type: "object",
    properties: { id: { type: "string", minLength: 1 } },
    required: ["id"],
    additionalProperties: false,
  },
  side_effect: "reversible",
  idempotency: "none",
  backend: { kind: "mcp", server: "notes", tool: "label_note" },
  model_views: [{ family: "mcp", name: "label_note" }],
};

let policyDir: string;
let upstream: V2Upstream;
let gw: TestGateway;

beforeAll(async () => {
  policyDir = await notesPolicyDir();
  // Readers may label notes too.
  const policy = NOTES_POLICY.replace(
    'input.action.name == "notes.read"',
    'input.action.name in {"notes.read", "notes.label"}',
  );
  await writeFile(path.join(policyDir, "writ", "decision.rego"), policy);
  ({ gw, upstream } = await startNotesOnV2Upstream(policyDir, [LABEL_CONTRACT]));
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await rm(policyDir, { recursive: true, force: true });
});

/** A raw caller that takes form elicitations. */
const elicits = { [CLIENT_CAPABILITIES_META_KEY]: { elicitation: { form: {} } } };

const labelled = z.object({ structuredContent: z.object({ id: z.string(), label: z.string() }) });

describe("an upstream's input_required rounds", () => {
  it("reach a real v2 client's elicitation handler and its answer goes back upstream", async () => {
    const client = new Client(
      { name: "input-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: MODERN_REVISION } }, capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { label: "urgent" } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
        requestInit: {
          headers: { authorization: `Bearer ${await gw.token("vera", { roles: ["viewer"] })}` },
        },
      }),
    );
    try {
      upstream.labelStates.length = 0;
      const result = labelled.parse(await client.callTool({ name: "label_note", arguments: { id: "n1" } }));
      expect(result.structuredContent).toEqual({ id: "n1", label: "urgent" });
      expect(asked).toEqual(["Which label for note n1?"]);
      // Two rounds upstream, each with a fresh grant: the first without state, the retry with the server's.
      expect(upstream.labelStates).toEqual([undefined, "label:n1"]);
    } finally {
      await client.close();
    }
  });

  it("answers input_required on the wire, and refuses Writ's state for another call", async () => {
    const token = await gw.token("vera", { roles: ["viewer"] });
    const first = await postModern(gw.url, token, {
      meta: elicits,
      method: "tools/call",
      params: { name: "label_note", arguments: { id: "n1" } },
    });
    const round = z
      .object({
        result: z.object({
          resultType: z.literal("input_required"),
          inputRequests: z.object({ label: z.object({ method: z.literal("elicitation/create") }) }),
          requestState: z.string(),
        }),
      })
      .parse(await first.json());
    const state = round.result.requestState;
    // Writ's own state, not the upstream's, and bound to this call.
    expect(state).not.toContain("label:n1");
    const other = await postModern(gw.url, token, {
      meta: elicits,
      method: "tools/call",
      params: {
        name: "label_note",
        arguments: { id: "n2" },
        requestState: state,
        inputResponses: { label: { action: "accept", content: { label: "x" } } },
      },
    });
    const refused = z
      .object({
        error: z.object({ code: z.number(), data: z.object({ error: z.object({ category: z.string() }) }) }),
      })
      .parse(await other.json());
    expect(refused.error.code).toBe(-32602);
    const another = await postModern(gw.url, await gw.token("mallory", { roles: ["viewer"] }), {
      meta: elicits,
      method: "tools/call",
      params: { name: "label_note", arguments: { id: "n1" }, requestState: state },
    });
    expect(z.object({ error: z.object({ code: z.number() }) }).parse(await another.json()).error.code).toBe(
      -32602,
    );
  });

  it("puts a 2025-11-25 caller's round to the policy as mcp.elicitation: refused here, the call fails saying why", async () => {
    // A 2025-11-25 caller is asked through a server-to-client request (server-requests.ts), once
    // the policy allows the action; this file's policy has no rule for it.
    const answer = await gw.request("POST", "/mcp", {
      token: await gw.token("vera", { roles: ["viewer"] }),
      body: {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "label_note", arguments: { id: "n1" } },
      },
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    });
    const result = z
      .object({
        result: z.object({
          isError: z.literal(true),
          structuredContent: z.object({ error: z.object({ category: z.string(), message: z.string() }) }),
        }),
      })
      .parse(answer.json);
    expect(result.result.structuredContent.error.message).toContain("elicitation/create");
    expect(result.result.structuredContent.error.message).toContain("no policy rule allows this action");
  });
});
