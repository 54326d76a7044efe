/**
 * The web console at /console (server-rendered with hono/jsx; no scripts): the decision list and
 * decision pages for reviewers, the approvals queue for approvers, sign-in with a bearer JWT.
 * Mounted by the HTTP app with `app.route("/console", consoleRoutes(gw, roles))`.
 */
import { randomUUID } from "node:crypto";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { approve, listApprovals, reject } from "../approvals/index.ts";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { Gateway } from "../core/gateway.ts";
import { ChainMonitor, shadowedDecisionId } from "../decisionlog/index.ts";
import { loggedRun, toDecisionFilter } from "../decisionlog/query.ts";
import { tenantScope } from "../http/middleware/auth/tenancy.ts";
import { currentRevision } from "../pipeline/08-log.ts";
import { PolicyLoadError } from "../policy/errors.ts";
import { explainDecision } from "../policy/explain.ts";
import type { DecisionFilter, DecisionLogEntry, TenantScope } from "../store/types.ts";
import { ApprovalsPage } from "./approvals.tsx";
import { DecisionPage } from "./decision.tsx";
import { DecisionListPage, decisionListQuerySchema } from "./decisions.tsx";
import { ExplainPage } from "./explain.tsx";
import { ErrorPage, sendPage } from "./layout.tsx";
import { ConsoleOidc, type ConsoleOidcSettings, OIDC_CALLBACK_PATH, OIDC_START_PATH } from "./oidc.ts";
import { PolicyChangesPage } from "./policy.tsx";
import { PolicyChangesSource, policyChangesQuerySchema, UPLOAD_LIMIT_BYTES } from "./policy-changes.ts";
import {
  CONSOLE_PATH,
  type ConsoleEnv,
  type ConsoleRoles,
  type ConsoleSessionSettings,
  checkCsrfToken,
  currentViewer,
  DEFAULT_SESSION_SETTINGS,
  endSession,
  requireAbility,
  requireSession,
  sameOriginOnly,
  startSession,
  type Viewer,
} from "./session.ts";
import { SignInPage } from "./signin.tsx";

export type { ConsoleRoles, ConsoleSessionSettings } from "./session.ts";

/** How many of the most recent matching decisions the charts draw. */
const CHART_SAMPLE = 1000;
/** The largest form the console accepts (a pasted token is the biggest field). */
const FORM_LIMIT_BYTES = 32 * 1024;
const UPLOAD_PATH = `${CONSOLE_PATH}/policy/candidates`;
const PUBLIC_PATHS = new Set([
  CONSOLE_PATH,
  `${CONSOLE_PATH}/`,
  `${CONSOLE_PATH}/sign-in`,
  OIDC_START_PATH,
  OIDC_CALLBACK_PATH,
]);

/** The console's settings: session lifetimes, and OpenID Connect sign-in when configured. */
export type ConsoleSettings = ConsoleSessionSettings & { oidc?: ConsoleOidcSettings | undefined };

function parseExternal<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${what} is not valid`, {
      fieldErrors: fieldErrorsFromZod(parsed.error),
      suggestedFix: "correct the fields listed and try again",
    });
  }
  return parsed.data;
}

const signInFormSchema = z.object({
  token: z
    .string()
    .max(16_384)
    .transform((text) => text.trim().replace(/^Bearer\s+/i, ""))
    .pipe(z.string().min(1, "paste your token")),
});
const csrfFormSchema = z.object({ csrf: z.string().optional() });
const approveFormSchema = csrfFormSchema.extend({
  reason: z
    .string()
    .max(2000)
    .optional()
    .transform((r) => (r?.trim() ? r.trim() : null)),
});
const rejectFormSchema = csrfFormSchema.extend({
  reason: z
    .string()
    .max(2000)
    .transform((r) => r.trim())
    .pipe(z.string().min(1, "say why you reject the request")),
});
/** A decision or approval id from the path. */
const idSchema = z.string().min(1).max(200);
/** A decision page's address may name the entry's tenant (platform roles only). */
const decisionPageQuerySchema = z.object({ tenant: z.string().min(1).max(500).optional() }).strict();
/** Pending requests per page of the approvals queue (oldest pages follow the link at its end). */
const APPROVALS_PER_PAGE = 50;
/** A run's calls listed on its decision pages (a run makes at most code_mode.max_calls). */
const RUN_ENTRIES_SHOWN = 500;

const decidedQuerySchema = z
  .object({
    decided: z.string().max(200),
    outcome: z.enum(["approved", "rejected"]),
    cursor: z.string().max(500),
  })
  .partial()
  .strict();

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

function isEligibleApprover(viewer: Viewer, approverRoles: string[], tenant: string): boolean {
  return viewer.subject.tenant === tenant && viewer.subject.roles.some((r) => approverRoles.includes(r));
}

async function formOf(c: Context): Promise<Record<string, unknown>> {
  return { ...(await c.req.parseBody()) };
}

export function consoleRoutes(
  gw: Gateway,
  roles: ConsoleRoles,
  sessions: ConsoleSettings = DEFAULT_SESSION_SETTINGS,
): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const oidc = sessions.oidc === undefined ? undefined : new ConsoleOidc(sessions.oidc);
  const signInPage = (problem?: string, fix?: string) => (
    <SignInPage problem={problem} fix={fix} oidc={oidc !== undefined} />
  );
  // The chain's status on every page, without a full walk of the log on every page.
  const chain = new ChainMonitor(gw.log);

  app.onError((error, c) => {
    const e = WritError.from(error, {
      message: "the console failed while handling the request",
      suggestedFix: "retry later; if it persists, tell the operator the time of the request",
    });
    if (e.category === "internal") console.error("console error:", error);
    if (e.category === "unauthenticated") return sendPage(c, signInPage(e.message, e.suggestedFix), 401);
    if (c.req.path.startsWith(OIDC_START_PATH)) {
      return sendPage(c, signInPage(e.message, e.suggestedFix), e.httpStatus as ContentfulStatusCode);
    }
    return sendPage(
      c,
      <ErrorPage error={e} viewer={c.get("viewer")} />,
      e.httpStatus as ContentfulStatusCode,
    );
  });

  const originCheck = sameOriginOnly();
  const session = requireSession(gw, roles, sessions);
  const formLimit = bodyLimit({
    maxSize: FORM_LIMIT_BYTES,
    onError: () => {
      throw new WritError("payload_too_large", `a console form is at most ${FORM_LIMIT_BYTES} bytes`, {
        suggestedFix: "shorten the text you entered",
      });
    },
  });
  // An uploaded candidate policy is larger than a form; it has its own limit.
  const uploadLimit = bodyLimit({
    maxSize: UPLOAD_LIMIT_BYTES,
    onError: () => {
      throw new WritError("payload_too_large", `an uploaded policy is at most ${UPLOAD_LIMIT_BYTES} bytes`, {
        suggestedFix: "upload the policy's .rego and data files only, or its bundle",
      });
    },
  });
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const limit = c.req.path === UPLOAD_PATH ? uploadLimit : formLimit;
    return originCheck(c, async () => {
      await limit(c, next);
    });
  });
  app.use("*", async (c, next) => (PUBLIC_PATHS.has(c.req.path) ? next() : session(c, next)));

  app.get("/", async (c) => {
    const viewer = await currentViewer(gw, c, roles, sessions);
    if (viewer === undefined) return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
    return c.redirect(`${CONSOLE_PATH}/${viewer.canReview ? "decisions" : "approvals"}`, 303);
  });

  app.get("/sign-in", (c) => sendPage(c, signInPage()));

  app.post("/sign-in", async (c) => {
    const form = signInFormSchema.safeParse(await formOf(c));
    if (!form.success) return sendPage(c, signInPage("paste your bearer token to sign in"), 400);
    const viewer = await startSession(gw, c, roles, sessions, form.data.token);
    return c.redirect(`${CONSOLE_PATH}/${viewer.canReview ? "decisions" : "approvals"}`, 303);
  });

  if (oidc !== undefined) {
    app.get("/sign-in/oidc", (c) => oidc.start(c));
    app.get("/sign-in/oidc/callback", async (c) => {
      const viewer = await oidc.finish(gw, c, roles, sessions);
      return c.redirect(`${CONSOLE_PATH}/${viewer.canReview ? "decisions" : "approvals"}`, 303);
    });
  }

  app.post("/sign-out", async (c) => {
    const viewer = c.get("viewer");
    checkCsrfToken(viewer, (await formOf(c)).csrf);
    await endSession(gw, c, viewer);
    return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
  });

  /** The viewer's tenant, or the one a platform role names (logged): the same rule as the API. */
  const scopeOf = (c: Context<ConsoleEnv>, requested: string | undefined, surface: string) =>
    tenantScope(gw.log, {
      subject: c.get("viewer").subject,
      requested,
      platformRoles: roles.platform ?? [],
      surface,
      requestId: c.var.requestId,
      policyRevision: currentRevision(gw),
    });

  app.get("/decisions", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const query = parseExternal(decisionListQuerySchema, c.req.query(), "the decision filter");
    const { cursor, limit, tenant, ...fields } = query;
    const scope = await scopeOf(c, tenant, "console /decisions");
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

  /** The decision a page is about, within the viewer's tenant (or the one a platform role names). */
  const decisionOf = async (c: Context<ConsoleEnv>, surface: string) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const id = parseExternal(idSchema, c.req.param("id"), "the decision id");
    const { tenant } = parseExternal(decisionPageQuerySchema, c.req.query(), "the page address");
    const scope = await scopeOf(c, tenant, surface);
    const entry = await gw.log.getIn(scope, id);
    if (entry === undefined) {
      throw new WritError("not_found", `no decision ${id} in the log`, {
        suggestedFix: "find the decision in the list and follow its link",
      });
    }
    return { viewer, id, tenant, scope, entry };
  };

  app.get("/decisions/:id", async (c) => {
    const { viewer, scope, entry } = await decisionOf(c, "console /decisions/:id");
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
    const { viewer, id, tenant, scope, entry } = await decisionOf(c, "console /decisions/:id/explain");
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

  const policyChanges = new PolicyChangesSource(gw);
  app.get("/policy", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "review", roles);
    const query = parseExternal(policyChangesQuerySchema, c.req.query(), "the page address");
    const scope = await scopeOf(c, query.tenant, "console /policy");
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
    const scope = await scopeOf(c, query.tenant, "console /policy/candidates");
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

  app.get("/approvals", async (c) => {
    const viewer = c.get("viewer");
    requireAbility(viewer, "approve", roles);
    const notice = parseExternal(decidedQuerySchema, c.req.query(), "the page address");
    const page = await listApprovals(
      gw,
      viewer.subject,
      { status: "pending" },
      APPROVALS_PER_PAGE,
      notice.cursor,
      randomUUID(),
    );
    const decidable = page.approvals.filter((a) =>
      isEligibleApprover(viewer, a.approver_roles, a.requester.tenant),
    );
    const pending = await Promise.all(
      decidable.map(async (approval) => ({
        approval,
        entry: await gw.log.getIn({ tenant: viewer.subject.tenant }, approval.decision_id),
      })),
    );
    const decided =
      notice.decided !== undefined && notice.outcome !== undefined
        ? { id: notice.decided, outcome: notice.outcome }
        : undefined;
    return sendPage(
      c,
      <ApprovalsPage viewer={viewer} pending={pending} decided={decided} nextCursor={page.next_cursor} />,
    );
  });

  /** The approver, the approval id and the form, once the role and the anti-forgery token check out. */
  async function approvalForm<T extends z.ZodType>(c: Context<ConsoleEnv>, schema: T, what: string) {
    const viewer = c.get("viewer");
    requireAbility(viewer, "approve", roles);
    const id = parseExternal(idSchema, c.req.param("id"), "the approval id");
    const form = await formOf(c);
    checkCsrfToken(viewer, form.csrf);
    return {
      viewer,
      id,
      form: parseExternal(schema, form, what),
      requestId: c.var.requestId,
    };
  }
  const decidedPage = (id: string, outcome: "approved" | "rejected") =>
    `${CONSOLE_PATH}/approvals?${new URLSearchParams({ decided: id, outcome })}`;

  app.post("/approvals/:id/approve", async (c) => {
    const { viewer, id, form, requestId } = await approvalForm(c, approveFormSchema, "the approval form");
    await approve(gw, id, viewer.subject, form.reason, requestId);
    return c.redirect(decidedPage(id, "approved"), 303);
  });

  app.post("/approvals/:id/reject", async (c) => {
    const { viewer, id, form, requestId } = await approvalForm(c, rejectFormSchema, "the rejection form");
    await reject(gw, id, viewer.subject, form.reason, requestId);
    return c.redirect(decidedPage(id, "rejected"), 303);
  });

  app.all("*", (c) => {
    throw new WritError("not_found", `the console has no page ${c.req.path}`, {
      suggestedFix: "start from the console's home page",
    });
  });

  return app;
}
