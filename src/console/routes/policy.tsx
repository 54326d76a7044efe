/** The Policy changes page: archived revisions and uploaded candidates replayed against recent decisions. */
import type { Hono } from "hono";
import { PolicyLoadError } from "../../policy/errors.ts";
import { sendPage } from "../layout.tsx";
import { PolicyChangesPage } from "../policy.tsx";
import { PolicyChangesSource, policyChangesQuerySchema } from "../policy-changes.ts";
import { CONSOLE_PATH, type ConsoleEnv, checkCsrfToken, requireAbility } from "../session.ts";
import { type ConsoleContext, parseExternal, scopeOf } from "./context.ts";

export function policyRoutes(app: Hono<ConsoleEnv>, ctx: ConsoleContext): void {
  const { gw, roles } = ctx;
  const policyChanges = new PolicyChangesSource(gw);

  app.get("/policy", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const query = parseExternal(policyChangesQuerySchema, c.req.query(), "the page address");
    const scope = await scopeOf(ctx, c, query.tenant, "console /policy");
    const changes = await policyChanges.read(scope, query);
    return sendPage(c, <PolicyChangesPage viewer={viewer} query={query} changes={changes} />);
  });

  // A reviewer uploads a candidate policy (a folder's files or a bundle) to replay and compare.
  app.post("/policy/candidates", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const body = await c.req.parseBody({ all: true });
    checkCsrfToken(viewer, typeof body.csrf === "string" ? body.csrf : undefined);
    const query = parseExternal(policyChangesQuerySchema, c.req.query(), "the page address");
    const scope = await scopeOf(ctx, c, query.tenant, "console /policy/candidates");
    const chosen = body.files === undefined ? [] : Array.isArray(body.files) ? body.files : [body.files];
    const files = await Promise.all(
      chosen
        .filter((f): f is File => typeof f !== "string")
        .map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })),
    );
    let id: string;
    try {
      id = await policyChanges.upload(scope, files);
    } catch (error) {
      if (!(error instanceof PolicyLoadError)) throw error;
      // The compiler's positioned errors, on the page the reviewer uploaded from.
      const changes = await policyChanges.read(scope, { ...query, candidate: undefined, upload: undefined });
      return sendPage(
        c,
        <PolicyChangesPage
          viewer={viewer}
          query={query}
          changes={changes}
          problems={error.details.length > 0 ? error.details : [error.message]}
        />,
        400,
      );
    }
    const next = new URLSearchParams({ upload: id, days: String(query.days) });
    if (query.tenant !== undefined) next.set("tenant", query.tenant);
    return c.redirect(`${CONSOLE_PATH}/policy?${next}`, 303);
  });
}
