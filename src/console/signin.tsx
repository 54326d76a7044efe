/** The sign-in page: paste a bearer JWT that carries a reviewer or approver role. */
import type { FC } from "hono/jsx";
import { Layout } from "./layout.tsx";

export const SignInPage: FC<{ problem?: string | undefined; fix?: string | undefined }> = ({
  problem,
  fix,
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
      <p>
        Paste the bearer token (a JWT) your identity provider issued you. It must carry a reviewer role (to
        read the decision log) or an approver role (to decide approval requests). Writ checks it once and
        starts a session: the token itself is not kept. The session ends when you sign out, when the token
        expires, or after at most a few hours, whichever comes first.
      </p>
      <form method="post" action="/console/sign-in">
        <textarea name="token" rows={5} cols={80} required autocomplete="off" spellcheck={false} />
        <p>
          <button type="submit">Sign in</button>
        </p>
      </form>
    </section>
  </Layout>
);
