/**
 * `POST /v1/execute`: run one call with its grant (`{grant, tool, arguments}` or `{grant, call}`);
 * answers `{tool, result}`. With an `Idempotency-Key`, a repeat of the same request answers the
 * stored outcome without running again.
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { executeWithGrant, type Gateway } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";
import { idempotencyKeyOf, idempotent, type StoredAnswer } from "../idempotency.ts";
import { authenticate } from "../middleware/auth/index.ts";
import { jsonBody, parseWith } from "../request.ts";

const executeBodySchema = z.union([
  z
    .object({
      grant: z.string().min(1),
      tool: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()).default({}),
    })
    .strict(),
  z.object({ grant: z.string().min(1), call: z.unknown() }).strict(),
]);

export function executeRoutes(gw: Gateway): Hono<HttpEnv> {
  return new Hono<HttpEnv>().post("/", authenticate(gw.identity), async (c) => {
    const body = parseWith(executeBodySchema, await jsonBody(c.req.raw), "", "the execute request");
    const call = "call" in body ? body.call : { tool: body.tool, arguments: body.arguments };
    const run = async (): Promise<StoredAnswer> => {
      const answer = await executeWithGrant(gw, {
        authorization: c.req.header("authorization"),
        subject: c.var.subject,
        grant: body.grant,
        call,
        requestId: c.var.requestId,
      });
      return { status: 200, body: answer };
    };
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    const answer =
      key === undefined
        ? await run()
        : await idempotent(gw.store, c.var.subject, key, { route: "execute", grant: body.grant, call }, run);
    return c.json(answer.body as object, answer.status as ContentfulStatusCode);
  });
}
