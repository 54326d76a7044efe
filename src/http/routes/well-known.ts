/**
 * `/.well-known/`: `jwks.json`, the public keys that verify grants; `writ-checkpoint-keys.json`,
 * the public keys that verify the decision log's checkpoints (a set of their own, so that no key
 * is good for both); `oauth-protected-resource`
 * (and its `/mcp` variant, RFC 9728), the MCP endpoint's protected resource metadata.
 */
import { Hono } from "hono";
import { WritError } from "../../core/errors.ts";
import { protectedResourceMetadata } from "../../mcp/resource-metadata.ts";
import type { Gateway } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";

export function wellKnownRoutes(gw: Gateway): Hono<HttpEnv> {
  const metadata = new Hono<HttpEnv>().get("/", (c) => {
    c.header("cache-control", "public, max-age=300");
    return c.json(protectedResourceMetadata(c.req.url, gw.identity));
  });
  return new Hono<HttpEnv>()
    .get("/jwks.json", async (c) => {
      // Another instance may have rotated the shared key file.
      await gw.grants.refresh();
      c.header("cache-control", "public, max-age=60");
      return c.json(gw.grants.jwks());
    })
    .get("/writ-checkpoint-keys.json", (c) => {
      if (gw.checkpoints === undefined) {
        throw new WritError("not_found", "this gateway writes no decision-log checkpoints", {
          suggestedFix: "enable decision_log.checkpoints in the gateway configuration",
        });
      }
      c.header("cache-control", "public, max-age=300");
      return c.json(gw.checkpoints.jwks());
    })
    .route("/oauth-protected-resource", metadata)
    .route("/oauth-protected-resource/mcp", metadata);
}
