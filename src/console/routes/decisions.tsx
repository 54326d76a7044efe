/** The reviewers' pages: the decision list with its charts, a decision, and its explanation. */
import type { Context, Hono } from "hono";
import { z } from "zod";
import { WritError } from "../../core/errors.ts";
import type { Gateway } from "../../core/gateway.ts";
import { shadowedDecisionId } from "../../decisionlog/index.ts";
import { loggedRun, toDecisionFilter } from "../../decisionlog/query.ts";
import { explainDecision } from "../../policy/explain.ts";
import type { DecisionFilter, DecisionLogEntry, TenantScope } from "../../store/types.ts";
import { DecisionPage } from "../decision.tsx";
import { DecisionListPage, decisionListQuerySchema } from "../decisions.tsx";
import { ExplainPage } from "../explain.tsx";
import { sendPage } from "../layout.tsx";
import { type ConsoleEnv, requireAbility } from "../session.ts";
import { type ConsoleContext, idSchema, parseExternal, scopeOf } from "./context.ts";

/** How many of the most recent matching decisions the charts draw. */
const CHART_SAMPLE = 1000;
/** A run's calls listed on its decision pages (a run makes at most code_mode.max_calls). */
const RUN_ENTRIES_SHOWN = 500;
/** A decision page's address may name the entry's tenant (platform roles only). */
const decisionPageQuerySchema = z.object({ tenant: z.string().min(1).max(500).optional() }).strict();

async function chartSample(
  gw: Gateway,
  scope: TenantScope,
  filter: DecisionFilter,
): Promise<DecisionLogEntry[]> {
  const sample: DecisionLogEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await gw.log.queryIn(scope, filter, 500, cursor);
    sample.push(...page.entries);
    cursor = page.next_cursor;
  } while (cursor !== undefined && sample.length < CHART_SAMPLE);
  return sample.slice(0, CHART_SAMPLE);
}

/** The decision a page is about, within the viewer's tenant (or the one a platform role names). */
async function decisionOf(ctx: ConsoleContext, c: Context<ConsoleEnv>, surface: string) {
  const viewer = c.get("viewer");
  requireAbility(viewer, "review", ctx.roles);
  const id = parseExternal(idSchema, c.req.param("id"), "the decision id");
  const { tenant } = parseExternal(decisionPageQuerySchema, c.req.query(), "the page address");
  const scope = await scopeOf(ctx, c, tenant, surface);
  const entry = await ctx.gw.log.getIn(scope, id);
  if (entry === undefined) {
    throw new WritError("not_found", `no decision ${id} in the log`, {
      suggestedFix: "find the decision in the list and follow its link",
    });
  }
  return { viewer, id, tenant, scope, entry };
}

export function decisionRoutes(app: Hono<ConsoleEnv>, ctx: ConsoleContext): void {
  const { gw, roles, chain } = ctx;

  app.get("/decisions", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const query = parseExternal(decisionListQuerySchema, c.req.query(), "the decision filter");
    const { cursor, limit, tenant, ...fields } = query;
    const scope = await scopeOf(ctx, c, tenant, "console /decisions");
    const filter = toDecisionFilter(fields);
    const page = await gw.log.queryIn(scope, filter, limit, cursor);
    const [status, sample] = await Promise.all([
      chain.checkEntries(page.entries),
      chartSample(gw, scope, filter),
    ]);
    return sendPage(
      c,
      <DecisionListPage
        viewer={viewer}
        query={query}
        entries={page.entries}
        nextCursor={page.next_cursor}
        chain={status}
        sample={sample}
      />,
    );
  });

  app.get("/decisions/:id", async (c) => {
    const { viewer, scope, entry } = await decisionOf(ctx, c, "console /decisions/:id");
    const link = loggedRun(entry);
    const run = link && {
      ...link,
      entries: (await gw.log.queryIn(scope, { run: link.id }, RUN_ENTRIES_SHOWN)).entries.reverse(),
    };
    return sendPage(
      c,
      <DecisionPage viewer={viewer} entry={entry} chain={await chain.checkEntries([entry])} run={run} />,
    );
  });

  app.get("/decisions/:id/explain", async (c) => {
    const { viewer, id, tenant, scope, entry } = await decisionOf(ctx, c, "console /decisions/:id/explain");
    // A shadow policy's disagreement is explained on the input of the live decision it names.
    const liveId = shadowedDecisionId(entry);
    const live = liveId === undefined ? undefined : await gw.log.getIn(scope, liveId);
    const explained = await explainDecision(
      entry,
      await gw.store.getPolicyRevision(entry.bundles.writ.revision),
      live,
    );
    const back = `/console/decisions/${encodeURIComponent(id)}${tenant === undefined ? "" : `?${new URLSearchParams({ tenant })}`}`;
    return sendPage(c, <ExplainPage viewer={viewer} explained={explained} back={back} />);
  });
}
