/** The console's page frame, its inline style sheet, and error pages that say what to do next. */
import type { Context } from "hono";
import { html } from "hono/html";
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { WritError } from "../core/errors.ts";
import type { Viewer } from "./session.ts";

const style = `
:root { color-scheme: light; --fg:#1d232a; --muted:#5b6672; --line:#d9dee3; --bg:#f6f7f9; --accent:#1f5fbf;
  --allow:#1e7b34; --deny:#b3261e; --approval:#a15c00; --cond:#5b3fb3; --error:#6b6b6b; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; gap:1.5rem; align-items:center; padding:.6rem 1.2rem; background:#fff; border-bottom:1px solid var(--line); }
header .brand { font-weight:700; }
header nav a { margin-right:1rem; }
header .who { margin-left:auto; color:var(--muted); display:flex; gap:.6rem; align-items:center; }
main { max-width: 1200px; margin: 1rem auto; padding: 0 1.2rem; }
a { color: var(--accent); }
h1 { font-size: 1.35rem; margin: .4rem 0 .8rem; }
h2 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
section, .card { background:#fff; border:1px solid var(--line); border-radius:6px; padding: .8rem 1rem; margin-bottom: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align:left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
code, pre { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { background: var(--bg); padding: .6rem; border-radius: 4px; overflow: auto; max-height: 28rem; }
dl { display:grid; grid-template-columns: max-content 1fr; gap:.25rem 1rem; margin:0; }
dt { color: var(--muted); }
dd { margin: 0; }
form.filters { display:flex; flex-wrap:wrap; gap:.5rem .8rem; align-items:flex-end; }
form.filters label { display:flex; flex-direction:column; font-size:.8rem; color:var(--muted); }
input, select, textarea, button { font: inherit; }
input, select, textarea { padding:.25rem .4rem; border:1px solid var(--line); border-radius:4px; background:#fff; }
button { padding:.3rem .8rem; border-radius:4px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
button.secondary { background:#fff; color:var(--accent); }
button.danger { background: var(--deny); border-color: var(--deny); }
.badge { display:inline-block; padding:0 .45rem; border-radius: 999px; font-size:.8rem; font-weight:600; color:#fff; background: var(--error); }
.badge.allow { background: var(--allow); } .badge.deny { background: var(--deny); }
.badge.require_approval { background: var(--approval); } .badge.allow_with_conditions { background: var(--cond); }
.chain { padding:.5rem .8rem; border-radius:6px; margin-bottom:1rem; font-weight:600; }
.chain.ok { background:#e7f4ea; color: var(--allow); border:1px solid #b8dcc1; }
.chain.broken { background:#fbe9e7; color: var(--deny); border:1px solid #efb8b2; }
tr.broken td { background:#fbe9e7; }
.muted { color: var(--muted); }
.notice { padding:.5rem .8rem; border-radius:6px; background:#e8f0fb; border:1px solid #bcd0ee; margin-bottom:1rem; }
.charts { display:grid; grid-template-columns: 1fr 1fr; gap:1rem; }
.charts svg { width:100%; height:auto; }
.pager { display:flex; gap:1rem; margin-top:.6rem; }
`;

export const DecisionBadge: FC<{ decision: string }> = ({ decision }) => (
  <span class={`badge ${decision}`}>{decision.replaceAll("_", " ")}</span>
);

export const Layout: FC<PropsWithChildren<{ title: string; viewer?: Viewer | undefined }>> = ({
  title,
  viewer,
  children,
}) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · Writ console`}</title>
      <style dangerouslySetInnerHTML={{ __html: style }} />
    </head>
    <body>
      <header>
        <span class="brand">Writ console</span>
        {viewer && (
          <nav>
            {viewer.canReview && <a href="/console/decisions">Decisions</a>}
            {viewer.canReview && <a href="/console/policy">Policy changes</a>}
            {viewer.canApprove && <a href="/console/approvals">Approvals</a>}
          </nav>
        )}
        {viewer && (
          <div class="who">
            <span>
              {viewer.subject.id} ({viewer.subject.tenant}) · {viewer.subject.roles.join(", ")}
            </span>
            <form method="post" action="/console/sign-out">
              <input type="hidden" name="csrf" value={viewer.csrf} />
              <button class="secondary" type="submit">
                Sign out
              </button>
            </form>
          </div>
        )}
      </header>
      <main>{children}</main>
    </body>
  </html>
);

/** Sends a page with the console's security headers (no caching, no framing, no scripts). */
export function sendPage(c: Context, page: Child, status: ContentfulStatusCode = 200) {
  c.header("cache-control", "no-store");
  c.header("x-content-type-options", "nosniff");
  c.header("referrer-policy", "same-origin");
  c.header(
    "content-security-policy",
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  return c.html(html`<!DOCTYPE html>${page}`, status);
}

const titles: Partial<Record<WritError["category"], string>> = {
  unauthenticated: "Sign in required",
  forbidden: "Not allowed",
  not_found: "Not found",
  invalid_argument: "That request is not valid",
};

/** A refusal or failure as a page: what happened and what to do next. */
export const ErrorPage: FC<{ error: WritError; viewer?: Viewer | undefined }> = ({ error, viewer }) => (
  <Layout title={titles[error.category] ?? "Something went wrong"} viewer={viewer}>
    <h1>{titles[error.category] ?? "Something went wrong"}</h1>
    <section>
      <p>{error.message}</p>
      {error.fieldErrors.length > 0 && (
        <ul>
          {error.fieldErrors.map((f) => (
            <li>
              <code>{f.path || "/"}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
      <p>
        <strong>What to do next:</strong> {error.suggestedFix}
      </p>
      <p>
        {error.category === "unauthenticated" || !viewer ? (
          <a href="/console/sign-in">Sign in</a>
        ) : (
          <a href="/console">Back to the console</a>
        )}
      </p>
    </section>
  </Layout>
);
