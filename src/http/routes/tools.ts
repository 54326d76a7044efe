/** `GET /v1/tools?family=`: the tools the caller may use, as its model family sees them. */
import { Hono } from "hono";
import { z } from "zod";
import type { ToolDiscovery } from "../../pipeline/index.ts";
import type { HttpEnv } from "../env.ts";
import { authenticate, type BearerVerifier } from "../middleware/auth/index.ts";
import { parseWith } from "../request.ts";

const familySchema = z.enum(["default", "openai", "anthropic", "mcp"]).default("default");

export function toolRoutes(
  gw: { identity: BearerVerifier },
  discovery: Pick<ToolDiscovery, "list">,
): Hono<HttpEnv> {
  return new Hono<HttpEnv>().get("/", authenticate(gw.identity), (c) => {
    const family = parseWith(familySchema, c.req.query("family"), "/family", "the family parameter");
    return c.json({ tools: discovery.list(c.var.subject, family) });
  });
}
