/**
 * A client that sends its request slowly does not hold a socket for long: the whole request
 * (headers and body) must arrive within server.request_timeout_ms, else Writ answers 408 and
 * closes the connection. Exercised over a raw TCP socket on loopback.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      server: { ...z.record(z.string(), z.unknown()).parse(document.server), request_timeout_ms: 400 },
    }),
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

/** Sends headers, then one body byte every `everyMs`; resolves with what came back once closed. */
function dribble(everyMs: number): Promise<{ answer: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("connect", () => {
      socket.write(
        `POST /v1/proposals HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
      );
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write(" ");
      }, everyMs);
    });
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("utf8");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ answer });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the socket was still open after 10 s; received: ${answer}`));
    }, 10_000).unref();
  });
}

describe("slow requests", () => {
  it("answers 408 and closes a connection whose body arrives too slowly, without an internal error", async () => {
    const errors = vi.spyOn(console, "error");
    try {
      const { answer } = await dribble(50);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(errors.mock.calls.map((call) => String(call[0]))).not.toContain("internal error:");
    } finally {
      errors.mockRestore();
    }
  });

  it("still serves a request that arrives in time", async () => {
    const health = await gw.request("GET", "/healthz");
    expect(health.status).toBe(200);
  });
});
