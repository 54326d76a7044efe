/**
 * For the scheduling tests: a policy that allows every call, and an HTTP backend on 127.0.0.1
 * that counts the calls in flight (the most at once, and when each started). Each call takes
 * `ms`, or, while `hold()` is on, waits for `release()`.
 */
import { createServer, type Server } from "node:http";

export const ALLOW_ALL_POLICY = `package writ

import rego.v1

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}}
`;

export interface CountingBackend {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  calls: number;
  inFlight: number;
  peak: number;
  /** Date.now() when each call arrived. */
  starts: number[];
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startCountingBackend(ms: number): Promise<CountingBackend> {
  let held: Array<() => void> | undefined;
  const server: Server = createServer((req, res) => {
    req.resume();
    backend.calls += 1;
    backend.starts.push(Date.now());
    backend.inFlight += 1;
    backend.peak = Math.max(backend.peak, backend.inFlight);
    const answer = () => {
      backend.inFlight -= 1;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
    };
    if (held) held.push(answer);
    else setTimeout(answer, ms);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the backend has no port");
  const backend: CountingBackend = {
    url: `http://127.0.0.1:${address.port}`,
    calls: 0,
    inFlight: 0,
    peak: 0,
    starts: [],
    hold: () => {
      held = [];
    },
    release: () => {
      for (const answer of held ?? []) answer();
      held = undefined;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return backend;
}
