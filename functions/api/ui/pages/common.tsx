/** @jsxImportSource hono/jsx */
import type { Child } from "hono/jsx";

/** Who the page's session belongs to. */
export interface Viewer {
  readonly tenant: string;
  /** Set when the session is limited to one project of the tenant. */
  readonly project?: string | undefined;
  readonly roles: readonly string[];
}

/** A project (or `_tenant`, the tenant layer) of a tenant. */
export interface ProjectRef {
  readonly tenant: string;
  readonly project: string;
}

/** `missing`: no usable session (the script may sign in from session storage). */
export type SessionState = "ok" | "missing";

export const enc = encodeURIComponent;

export function projectHref(ref: ProjectRef): string {
  return `/ui/tenants/${enc(ref.tenant)}/projects/${enc(ref.project)}`;
}

export function toolHref(ref: ProjectRef, name: string): string {
  return `${projectHref(ref)}/tools/${enc(name)}`;
}

export function modelHref(ref: ProjectRef): string {
  return `${projectHref(ref)}/model`;
}

export function projectLabel(ref: ProjectRef): string {
  return ref.project === "_tenant" ? `${ref.tenant} (tenant layer)` : `${ref.tenant} / ${ref.project}`;
}

export interface Crumb {
  readonly label: string;
  readonly href?: string;
}

export function Layout(props: {
  title: string;
  /** `public`: a page anyone may read (`/docs`); it shows no session. */
  session: SessionState | "public";
  viewer?: Viewer | undefined;
  crumbs?: readonly Crumb[];
  tabs?: { at: ProjectRef; current: "tools" | "model" } | undefined;
  children?: Child;
}) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · Vance Server Tools`}</title>
        <link rel="stylesheet" href="/ui/assets/ui.css" />
        <script src="/ui/assets/ui.js" defer />
      </head>
      <body data-session={props.session}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="site">
          <a class="brand" href="/ui/">
            Vance Server Tools
          </a>
          <nav class="site-links" aria-label="Sections">
            <a href="/ui/">Tools</a>
            <a href="/docs">API reference</a>
          </nav>
          {props.session === "public" ? null : (
            <div class="who" aria-live="polite">
              <span id="session-status">
                {props.viewer
                  ? `Signed in for ${props.viewer.tenant === "*" ? "all tenants" : `tenant ${props.viewer.tenant}`} (read only)`
                  : "Not signed in"}
              </span>{" "}
              {props.viewer ? (
                <button type="button" class="quiet" id="sign-out">
                  Sign out
                </button>
              ) : null}
            </div>
          )}
        </header>
        <main id="main">
          {props.crumbs && props.crumbs.length > 0 ? (
            <nav class="crumbs" aria-label="Breadcrumb">
              <ol>
                {props.crumbs.map((crumb, index) => (
                  <li>
                    {crumb.href && index < props.crumbs!.length - 1 ? (
                      <a href={crumb.href}>{crumb.label}</a>
                    ) : (
                      <span aria-current="page">{crumb.label}</span>
                    )}
                  </li>
                ))}
              </ol>
            </nav>
          ) : null}
          {props.tabs ? (
            <nav class="tabs" aria-label="Views of this project">
              <ul>
                <li>
                  <a
                    href={projectHref(props.tabs.at)}
                    aria-current={props.tabs.current === "tools" ? "page" : undefined}
                  >
                    Tools
                  </a>
                </li>
                <li>
                  <a
                    href={modelHref(props.tabs.at)}
                    aria-current={props.tabs.current === "model" ? "page" : undefined}
                  >
                    What the model sees
                  </a>
                </li>
              </ul>
            </nav>
          ) : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function LayerBadge(props: { layer: string }) {
  return <span class={`badge layer-${props.layer}`}>{props.layer}</span>;
}

export function Labels(props: { labels: readonly string[]; href?: (label: string) => string }) {
  if (props.labels.length === 0) return <span class="muted">—</span>;
  return (
    <span>
      {props.labels.map((label) =>
        props.href ? (
          <a class="label" href={props.href(label)} aria-label={`only tools labelled ${label}`}>
            {label}
          </a>
        ) : (
          <span class="label">{label}</span>
        ),
      )}
    </span>
  );
}

export function Json(props: { value: unknown }) {
  return <pre>{JSON.stringify(props.value, null, 2)}</pre>;
}

/** A problem as the API answers it (status, stable code, detail, field errors). */
export interface ProblemView {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors?: readonly { path: string; message: string; line?: number }[];
}

export function Problem(props: { problem: ProblemView }) {
  const { problem } = props;
  return (
    <div class="problem" role="alert">
      <p>
        <strong>{`${problem.status} ${problem.code}`}</strong>: {problem.detail}
      </p>
      {problem.errors && problem.errors.length > 0 ? (
        <ul>
          {problem.errors.map((error) => (
            <li>
              <code>{error.path || "document"}</code>
              {error.line === undefined ? "" : ` (line ${error.line})`}: {error.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A table's header row of column names. */
export function ColumnHeads(props: { names: readonly string[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((name) => (
          <th scope="col">{name}</th>
        ))}
      </tr>
    </thead>
  );
}
