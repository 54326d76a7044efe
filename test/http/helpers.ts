/**
 * The HTTP layer on its own: a real `IdentityVerifier` trusting one in-memory key, tokens signed
 * with it, and `mount()`, which serves route modules behind the app's error path and request ids
 * (as `createApp` does) without a whole gateway.
 */
import { Hono } from "hono";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import type { HttpEnv } from "../../src/http/env.ts";
import { notFound, onError } from "../../src/http/errors.ts";
import { requestId } from "../../src/http/middleware/request-id/index.ts";
import { IdentityVerifier } from "../../src/identity/index.ts";
import { jwksOf, makeKey, sign, type TestKey } from "../identity/helpers.ts";

export const ISSUER = "https://idp.http.test";

export interface Identity {
  verifier: IdentityVerifier;
  /** `Authorization` header value for `subject` with `roles` (tenant `demo`). */
  bearer(subject: string, roles?: string[]): Promise<string>;
}

export async function testIdentity(): Promise<Identity> {
  const key: TestKey = await makeKey("EdDSA");
  const verifier = new IdentityVerifier({
    issuers: [{ issuer: ISSUER, audience: "writ", jwks: jwksOf(key) }],
  });
  return {
    verifier,
    bearer: async (subject, roles = ["developer"]) =>
      `Bearer ${await sign(key, { iss: ISSUER, sub: subject, tnt: "demo", roles })}`,
  };
}

/** `routes` under `path`, behind the app's error path and request ids. */
export function mount(path: string, routes: Hono<HttpEnv>): Hono {
  const app = new Hono();
  app.onError(onError);
  app.notFound(notFound);
  app.use("*", requestId());
  app.route(path, routes);
  return app;
}

/** A WritError body, checked. */
export async function errorBody(response: Response): Promise<z.infer<typeof writErrorSchema>> {
  return writErrorSchema.strict().parse(await response.json());
}

export const recordSchema = z.record(z.string(), z.unknown());
