/** @jsxImportSource hono/jsx */
import { Layout, Problem, type ProblemView, type SessionState, type Viewer } from "./common";

/** A refused page: the same status and `code` the API answers, readable. */
export function ErrorPage(props: {
  problem: ProblemView;
  viewer?: Viewer | undefined;
  session: SessionState;
}) {
  return (
    <Layout
      title={`${props.problem.status} ${props.problem.code}`}
      session={props.session}
      viewer={props.viewer}
    >
      <h1>{props.problem.status === 403 ? "Not allowed" : "This page cannot be shown"}</h1>
      <Problem problem={props.problem} />
      <p>
        <a href="/ui/">Choose another project</a>
      </p>
    </Layout>
  );
}

/** No session: how to open the listing with a token. */
export function SignInPage(props: { problem?: ProblemView | undefined }) {
  return (
    <Layout title="Sign in" session="missing">
      <h1>Sign in to the tool listing</h1>
      {props.problem ? <Problem problem={props.problem} /> : null}
      {/* Shown by the script, which keeps the token out of any URL; without it the form cannot send one. */}
      <form class="inline" id="token-form" hidden>
        <label>
          Token
          <input id="token-input" type="password" required autocomplete="off" spellcheck={false} size={40} />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <p>
        Paste a token above, or open this page with one in the address's fragment:{" "}
        <code>/ui/#token=&lt;jwt&gt;</code>. The token stays in this tab (session storage) and is never sent
        in a URL; the page trades it for a read-only session cookie of up to an hour.
      </p>
      <p class="muted">
        <code>npm start</code> prints a development token;{" "}
        <code>npm run token -- --tenant acme --roles read</code> mints one for a tenant.
      </p>
    </Layout>
  );
}
