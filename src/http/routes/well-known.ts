/** `GET /.well-known/jwks.json`: the public keys that verify grants. */
import { Hono } from "hono";
import type { Gateway } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";

export function wellKnownRoutes(gw: Gateway): Hono<HttpEnv> {
  return new Hono<HttpEnv>().get("/jwks.json", async (c) => {
    // Another instance may have rotated the shared key file.
    await gw.grants.refresh();
    c.header("cache-control", "public, max-age=60");
    return c.json(gw.grants.jwks());
  });
}
