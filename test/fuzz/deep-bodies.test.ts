/**
 * Found by the fuzz harness (bench/fuzz.ts): strict JSON built a JSON Pointer for every key by
 * walking the whole nesting stack, so a body nested 16 000 objects deep blocked the event loop
 * for ~30 s (every other caller waited), and one nesting `{"__proto__":` that deep ran the
 * process out of memory. Over real HTTP: such bodies are refused quickly, and the gateway keeps
 * answering.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let token: string;

beforeAll(async () => {
  gw = await startTestGateway();
  token = await gw.token("alice");
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const depth = 40_000;
const nested = (unit: string, inner: string) => `${unit.repeat(depth)}${inner}${"}".repeat(depth)}`;
const ping = '{"jsonrpc":"2.0","id":4,"method":"ping"}';

describe("deeply nested bodies", () => {
  it.each([
    ["/mcp", nested('{"a":', ping)],
    ["/mcp", nested('{"__proto__":', ping)],
    ["/v1/proposals", nested('{"a":', '{"format":"canonical"}')],
    ["/v1/proposals", nested('{"__proto__":', '{"format":"canonical"}')],
  ])("POST %s: refused as a WritError", async (route, body) => {
    const answer = await gw.request("POST", route, {
      token,
      rawBody: body,
      headers: { accept: "application/json" },
    });
    expect(answer.status, answer.text.slice(0, 300)).toBeLessThan(500);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    const rpc = z.object({ error: z.object({ data: z.unknown() }) }).safeParse(answer.json);
    const error = route === "/mcp" && rpc.success ? rpc.data.error.data : answer.json;
    expect(writErrorSchema.safeParse(error).success, answer.text.slice(0, 300)).toBe(true);
    expect((await gw.health()).status).toBe("ok");
  });
});
