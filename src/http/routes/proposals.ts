/**
 * `POST /v1/proposals`: decide (and with `execute: true`, run) a model's proposed calls; answers
 * `{results}`. An executing proposal may carry an `Idempotency-Key`.
 *
 * The route does not authenticate: the pipeline's identity stage refuses an unauthenticated
 * proposal and logs each refused call.
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import type { WritError, WritErrorBody } from "../../core/errors.ts";
import { proposalFormats, type Subject } from "../../core/types.ts";
import { bearerChallenge } from "../../identity/index.ts";
import { type CallOutcome, type Gateway, handleProposal, logRefusedRequest } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";
import { idempotencyKeyOf, idempotent, type StoredAnswer } from "../idempotency.ts";
import { jsonBody, parseWith } from "../request.ts";

const proposalBodySchema = z
  .object({
    format: z.enum(proposalFormats).default("auto"),
    payload: z.unknown(),
    session: z.string().min(1).max(200).optional(),
    execute: z.boolean().default(false),
  })
  .strict();

/**
 * A proposal whose calls were refused by limits, none of them granted or waiting for approval:
 * answered 429, its body the refusal with the longest wait (a WritError, like every 4xx) with the
 * calls' `results` beside it, and `Retry-After` that wait (when one names any).
 */
function rateLimited(results: readonly CallOutcome[]): WritErrorBody | undefined {
  if (results.some((r) => r.grant !== undefined || r.approval !== undefined)) return undefined;
  let longest: WritErrorBody | undefined;
  for (const { error } of results) {
    if (error?.category !== "rate_limited") continue;
    if (longest === undefined || (error.retry_after ?? 0) > (longest.retry_after ?? 0)) longest = error;
  }
  return longest;
}

/**
 * A proposal refused for want of OAuth scopes (step-up), none of its calls granted or waiting for
 * approval: answered 403, its body the first such refusal with the calls' `results` beside it,
 * and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` naming every scope the
 * refused calls need (RFC 6750 section 3.1). Only scopes of tools the caller may see are named
 * (the pipeline's `denial`).
 */
function scopeChallenge(
  results: readonly CallOutcome[],
): { error: WritErrorBody; header: string } | undefined {
  if (results.some((r) => r.grant !== undefined || r.approval !== undefined)) return undefined;
  const refused = results.flatMap(({ error }) => (error?.required_scopes === undefined ? [] : [error]));
  const first = refused[0];
  if (first === undefined) return undefined;
  const scopes = [...new Set(refused.flatMap((error) => error.required_scopes ?? []))];
  const header = bearerChallenge({
    scopes,
    error: { code: "insufficient_scope", description: first.message },
  });
  return { error: first, header };
}

/**
 * A proposal whose body is refused before intake (a repeated or `__proto__` key) is logged like
 * any refused proposal: its calls, as far as they can be read, with the refusal.
 */
async function logRefusedBody(gw: Gateway, value: unknown, error: WritError, requestId: string) {
  const body = proposalBodySchema.safeParse(value);
  if (!body.success) return;
  const { format, payload, session } = body.data;
  await logRefusedRequest(
    gw,
    { format, payload, ...(session === undefined ? {} : { session }), requestId },
    error,
  ).catch(() => undefined);
}

export function proposalRoutes(gw: Gateway): Hono<HttpEnv> {
  return new Hono<HttpEnv>().post("/", async (c) => {
    const onRefused = (value: unknown, error: WritError) => logRefusedBody(gw, value, error, c.var.requestId);
    const body = parseWith(
      proposalBodySchema,
      await jsonBody(c.req.raw, { onRefused }),
      "",
      "the proposal request",
    );
    let retryAfter: number | undefined;
    let challenge: string | undefined;
    const run = async (subject?: Subject): Promise<StoredAnswer> => {
      const results = await handleProposal(gw, {
        authorization: c.req.header("authorization"),
        ...(subject === undefined ? {} : { subject }),
        format: body.format,
        payload: body.payload,
        ...(body.session === undefined ? {} : { session: body.session }),
        execute: body.execute,
        requestId: c.var.requestId,
      });
      const stepUp = scopeChallenge(results);
      if (stepUp !== undefined) {
        challenge = stepUp.header;
        return { status: 403, body: { ...stepUp.error, results } };
      }
      const limited = rateLimited(results);
      if (limited === undefined) return { status: 200, body: { results } };
      retryAfter = limited.retry_after;
      return { status: 429, body: { ...limited, results } };
    };
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    let answer: StoredAnswer;
    if (key !== undefined && body.execute) {
      // The key belongs to a subject; without one, the pipeline refuses the proposal and logs it.
      const subject = await gw.identity.verify(c.req.header("authorization")).catch(() => undefined);
      answer = subject
        ? await idempotent(gw.store, subject, key, { route: "proposals", body }, () => run(subject))
        : await run();
    } else {
      answer = await run();
    }
    if (retryAfter !== undefined) c.header("Retry-After", String(retryAfter));
    if (challenge !== undefined) c.header("WWW-Authenticate", challenge);
    return c.json(answer.body as object, answer.status as ContentfulStatusCode);
  });
}
