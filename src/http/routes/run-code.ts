/**
 * Code Mode's HTTP entrance (README "Code Mode"):
 *
 *   POST /v1/run_code      {code, session?}: run a program; 200 with the outcome when it returned,
 *                          the error's status with the same body shape when it did not
 *   GET  /v1/run_code/sdk  the caller's SDK: {declarations, tools, run_code} (run_code: whether
 *                          the policy lets the caller run code at all)
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import type { CodeMode } from "../../codemode/index.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier } from "../middleware/auth/index.ts";
import { jsonBody, parseWith } from "../request.ts";

const runBodySchema = z
  .object({
    code: z.string().min(1),
    session: z.string().min(1).max(200).optional(),
  })
  .strict();

export function runCodeRoutes(gw: { identity: BearerVerifier }, codeMode: CodeMode): Hono<HttpEnv> {
  const authenticated = authenticate(gw.identity);
  return new Hono<HttpEnv>()
    .post("/", authenticated, async (c) => {
      codeMode.checkEnabled();
      const body = parseWith(runBodySchema, await jsonBody(c.req.raw), "", "the run_code request");
      const answer = await codeMode.run({
        subject: c.var.subject,
        code: body.code,
        ...(body.session === undefined ? {} : { session: body.session }),
        requestId: c.var.requestId,
        signal: c.req.raw.signal,
      });
      // A caller at its cap of runs at once (429) is told when to try again.
      const retryAfter = answer.body.error?.retry_after;
      if (retryAfter !== undefined) c.header("retry-after", String(retryAfter));
      return c.json(answer.body, answer.status as ContentfulStatusCode);
    })
    .get("/sdk", authenticated, (c) => {
      codeMode.checkEnabled();
      const subject = c.var.subject;
      const tools = codeMode.tools(subject);
      return c.json({
        declarations: codeMode.sdk(subject),
        tools: tools.map((tool) => tool.name),
        run_code: codeMode.offered(subject),
      });
    });
}
