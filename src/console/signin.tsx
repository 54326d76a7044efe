/**
 * The sign-in page: with `console.oidc`, a link to sign in at the identity provider (authorization
 * code with PKCE, `oidc.ts`); always, a form to paste a bearer JWT, and how to get one for
 * development (`writ token`).
 */
import type { FC } from "hono/jsx";
import { Layout } from "./layout.tsx";
import { OIDC_START_PATH } from "./oidc.ts";

export const SignInPage: FC<{ problem?: string | undefined; fix?: string | undefined; oidc?: boolean }> = ({
  problem,
  fix,
  oidc,
}) => (
  <Layout title="Sign in">
    <h1>Sign in to the Writ console</h1>
    <section>
      {problem && (
        <div class="chain broken" role="alert">
          {problem}
          {fix ? ` — ${fix}` : ""}
        </div>
      )}
      {oidc && (
        <p>
          <a class="button" id="oidc-sign-in" href={OIDC_START_PATH}>
            Sign in with your identity provider
          </a>
        </p>
      )}
      <p>
        {oidc ? "Or paste" : "Paste"} the bearer token (a JWT) your identity provider issued you. It must
        carry a reviewer role (to read the decision log) or an approver role (to decide approval requests).
        Writ checks it once and starts a session: the token itself is not kept. The session ends when you sign
        out, when the token expires, or after at most a few hours, whichever comes first.
      </p>
      <form method="post" action="/console/sign-in">
        <textarea name="token" rows={5} cols={80} required autocomplete="off" spellcheck={false} />
        <p>
          <button type="submit">Sign in</button>
        </p>
      </form>
      <p>
        For development, with the configuration's development issuer on (the default one's is), mint a token
        with a reviewer role: <code>npx writ token --sub &lt;you&gt; --roles reviewer</code> (add{" "}
        <code>--config &lt;file&gt;</code> for your configuration, <code>--tenant</code> for another tenant
        than demo, <code>approver</code> to decide approvals).
      </p>
    </section>
  </Layout>
);
