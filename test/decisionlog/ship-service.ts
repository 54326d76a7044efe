/**
 * A loopback OPA-compatible decision-log service for the shipping tests (node:http on
 * 127.0.0.1:0): it checks each upload's headers, gunzips and parses its body as an array of OPA
 * decision-log events, and answers as told: 204, 500, a dropped connection, or not at all. Only acknowledged
 * (2xx) uploads count as received.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { z } from "zod";

export const opaEventSchema = z
  .object({
    decision_id: z.string().min(1),
    path: z.string().min(1),
    input: z.unknown().optional(),
    result: z.unknown().optional(),
    timestamp: z.iso.datetime({ offset: true }),
    bundles: z.record(z.string(), z.object({ revision: z.string() }).strict()),
    metrics: z.record(z.string(), z.number()),
    erased: z.array(z.string()),
    masked: z.array(z.string()),
    labels: z.record(z.string(), z.string()),
    requested_by: z.string(),
    req_id: z.number().int().positive(),
  })
  .strict();
export type OpaEvent = z.infer<typeof opaEventSchema>;

/** 204; HTTP 500; the connection dropped; or no answer at all (the client's timeout ends it). */
export type Answer = "ok" | "500" | "drop" | "hang";

export interface Upload {
  /** The gzipped body's size. */
  bytes: number;
  events: OpaEvent[];
  headers: IncomingMessage["headers"];
}

export interface DecisionLogService {
  /** The service's base URL (uploads go to `<url>/logs`). */
  url: string;
  /** Acknowledged uploads, in the order they arrived. */
  uploads: Upload[];
  /** Every acknowledged event, in arrival order. */
  events(): OpaEvent[];
  /** Attempts that were answered with a failure (500, a dropped connection, no answer). */
  failed: number;
  /** Uploads that were not valid (wrong path, headers or body): the test fails on any. */
  invalid: string[];
  /** How the next attempts are answered, in order; once empty, `otherwise` answers. */
  plan: Answer[];
  otherwise: Answer;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

/** What is wrong with an upload, or its events. */
function parseUpload(request: IncomingMessage, body: Buffer, resource: string): string | OpaEvent[] {
  if (request.method !== "POST" || request.url !== resource) return `${request.method} ${request.url}`;
  if (request.headers["content-encoding"] !== "gzip") return "no Content-Encoding: gzip";
  if (request.headers["content-type"] !== "application/json") return "no Content-Type: application/json";
  let json: unknown;
  try {
    json = JSON.parse(gunzipSync(body).toString("utf8"));
  } catch (error) {
    return `not gzipped JSON: ${String(error)}`;
  }
  const parsed = z.array(opaEventSchema).min(1).safeParse(json);
  return parsed.success ? parsed.data : `not an array of OPA events: ${z.prettifyError(parsed.error)}`;
}

export async function startDecisionLogService(resource = "/logs"): Promise<DecisionLogService> {
  const service: Omit<DecisionLogService, "url" | "close"> = {
    uploads: [],
    events: () => service.uploads.flatMap((u) => u.events),
    failed: 0,
    invalid: [],
    plan: [],
    otherwise: "ok",
  };
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const body = await readBody(request);
    const answer = service.plan.shift() ?? service.otherwise;
    if (answer === "hang") {
      service.failed++;
      return;
    }
    if (answer === "drop") {
      service.failed++;
      request.socket.destroy();
      return;
    }
    if (answer === "500") {
      service.failed++;
      response.writeHead(500).end("down for the test");
      return;
    }
    const events = parseUpload(request, body, resource);
    if (typeof events === "string") {
      service.invalid.push(events);
      response.writeHead(400).end(events);
      return;
    }
    service.uploads.push({ bytes: body.length, events, headers: request.headers });
    response.writeHead(204).end();
  };
  const server = createServer((request, response) => {
    handle(request, response).catch(() => request.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(service, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
