/** @jsxImportSource hono/jsx */
import type { PackSource } from "@vance/core";
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

const enc = encodeURIComponent;

export function projectHref(ref: ProjectRef): string {
  return `/ui/tenants/${enc(ref.tenant)}/projects/${enc(ref.project)}`;
}

export function toolHref(ref: ProjectRef, name: string): string {
  return `${projectHref(ref)}/tools/${enc(name)}`;
}

export function modelHref(ref: ProjectRef): string {
  return `${projectHref(ref)}/model`;
}

function projectLabel(ref: ProjectRef): string {
  return ref.project === "_tenant" ? `${ref.tenant} (tenant layer)` : `${ref.tenant} / ${ref.project}`;
}

interface Crumb {
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

function LayerBadge(props: { layer: string }) {
  return <span class={`badge layer-${props.layer}`}>{props.layer}</span>;
}

function Labels(props: { labels: readonly string[]; href?: (label: string) => string }) {
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

function Json(props: { value: unknown }) {
  return <pre>{JSON.stringify(props.value, null, 2)}</pre>;
}

/** A problem as the API answers it (status, stable code, detail, field errors). */
export interface ProblemView {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors?: readonly { path: string; message: string; line?: number }[];
}

function Problem(props: { problem: ProblemView }) {
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

/** The projects of a tenant the picker offers (`GET /v1/tenants/{tenant}/projects`). */
export interface TenantProjectsView {
  readonly tenant: string;
  readonly projects: readonly string[];
  readonly tenantLayer: boolean;
  readonly truncated: boolean;
}

/**
 * The start page: the tenant's projects that hold documents, as links, and a form for any other
 * project id (one without documents yet). A platform viewer first names the tenant.
 */
export function PickerPage(props: { viewer: Viewer; listed?: TenantProjectsView | undefined }) {
  const fixed = props.viewer.tenant === "*" ? "" : props.viewer.tenant;
  const { listed } = props;
  const tenant = fixed || listed?.tenant || "";
  return (
    <Layout title="Projects" session="ok" viewer={props.viewer}>
      <h1>Open a project</h1>
      {fixed === "" ? (
        <form class="inline" method="get" action="/ui/">
          <label>
            Tenant
            <input
              name="tenant"
              required
              value={tenant}
              pattern="[a-z0-9][a-z0-9_\-]{0,62}"
              autocomplete="off"
            />
          </label>
          <button type="submit">List its projects</button>
        </form>
      ) : null}
      {listed ? (
        <section aria-labelledby="projects-heading">
          <h2 id="projects-heading">{`Projects of ${listed.tenant}`}</h2>
          {listed.projects.length === 0 && !listed.tenantLayer ? (
            <p class="muted">
              {`No project of ${listed.tenant} holds documents yet: write one (PUT …/projects/{project}/tools/{name}, or vance-tools push), or open a project by its id below.`}
            </p>
          ) : (
            <ul class="projects" aria-label={`Projects of ${listed.tenant}`}>
              {listed.tenantLayer ? (
                <li>
                  <a href={projectHref({ tenant: listed.tenant, project: "_tenant" })}>
                    The tenant layer (_tenant)
                  </a>
                </li>
              ) : null}
              {listed.projects.map((project) => (
                <li>
                  <a href={projectHref({ tenant: listed.tenant, project })}>{project}</a>
                </li>
              ))}
            </ul>
          )}
          {listed.truncated ? (
            <p class="notice">{`Only the first ${listed.projects.length} projects are listed; open others by id.`}</p>
          ) : null}
        </section>
      ) : null}
      {tenant ? (
        <>
          <h2 id="by-id">Open by id</h2>
          <form class="inline" method="get" action="/ui/open" aria-labelledby="by-id">
            <input type="hidden" name="tenant" value={tenant} />
            <label>
              Project
              <input name="project" required pattern="[a-z0-9_][a-z0-9_\-]{0,62}" autocomplete="off" />
            </label>
            <button type="submit">Show tools</button>
          </form>
          <p class="muted">
            The project <code>_tenant</code> shows the tenant layer alone; a project without documents shows
            the tenant's and the bundled tools.
          </p>
        </>
      ) : null}
    </Layout>
  );
}

/** A tool's usage by one role. */
export interface RoleUsage {
  readonly role: string;
  readonly calls: number;
  readonly discoveryHits: number;
}

/** One row of the project's tool table. */
export interface ToolRow {
  readonly name: string;
  readonly layer: string;
  readonly type: string;
  readonly description: string;
  readonly labels: readonly string[];
  readonly primary: boolean;
  /** `no`: a document of `layer` disables it; `invalid`: the winning document does not parse. */
  readonly enabled: "yes" | "no" | "invalid";
  readonly usage: readonly RoleUsage[];
}

/** A pack and its sub-tools. */
export interface PackGroup {
  readonly pack: string;
  readonly layer: string;
  readonly type: string;
  readonly rows: readonly ToolRow[];
  /** Its source's state; `unavailable` packs have no rows. */
  status?: "current" | "stale" | "unavailable";
  reason?: string | undefined;
  /** Operations (or tools) its source offered that the pack leaves out. */
  leftOut?: number;
}

/** A pack head's note on its source, when it is not simply current. */
function SourceState(props: { group: PackGroup }) {
  const { status, reason, leftOut } = props.group;
  return (
    <>
      {status && status !== "current" ? (
        <>
          {" · "}
          <span class="badge state-off">{status}</span> {reason ?? ""}
        </>
      ) : null}
      {leftOut ? ` · ${leftOut} left out by the pack (see its page)` : ""}
    </>
  );
}

export type ListingItem =
  | { readonly kind: "tool"; readonly row: ToolRow }
  | { readonly kind: "pack"; readonly group: PackGroup };

function Usage(props: { usage: readonly RoleUsage[] }) {
  if (props.usage.length === 0) return <span class="muted">—</span>;
  return (
    <span>
      {props.usage.map((entry, index) => (
        <>
          {index > 0 ? <br /> : null}
          {`${entry.role}: ${entry.calls} call${entry.calls === 1 ? "" : "s"}`}
          {entry.discoveryHits > 0
            ? `, ${entry.discoveryHits} look-up${entry.discoveryHits === 1 ? "" : "s"}`
            : ""}
        </>
      ))}
    </span>
  );
}

/** What the listing's filter matches a row by: its name, type, labels and description, lower-cased. */
function searchText(row: ToolRow): string {
  return [row.name, row.type, ...row.labels, row.description].join(" ").toLowerCase();
}

function Row(props: { row: ToolRow; at: ProjectRef; sub?: boolean }) {
  const { row, at: ref } = props;
  const labelHref = (label: string) => `${projectHref(ref)}?label=${enc(label)}`;
  return (
    <tr class={props.sub ? "sub" : undefined} data-search={searchText(row)}>
      <th scope="row">
        <a href={toolHref(ref, row.name)}>{row.name}</a>
      </th>
      <td data-label="Layer">
        <LayerBadge layer={row.layer} />
      </td>
      <td data-label="Type">{row.type}</td>
      <td data-label="Labels">
        <Labels labels={row.labels} href={labelHref} />
      </td>
      <td data-label="Surface">{row.primary ? "primary" : "deferred"}</td>
      <td data-label="Enabled">
        {row.enabled === "yes" ? (
          "yes"
        ) : (
          <span class="badge state-off">{row.enabled === "no" ? "disabled" : "invalid"}</span>
        )}
      </td>
      <td data-label="Usage">
        <Usage usage={row.usage} />
      </td>
    </tr>
  );
}

/** Packs with more sub-tools than this are listed collapsed, each below the table in a section of its own. */
export const COLLAPSED_PACK_SIZE = 20;

function packId(pack: string): string {
  return `pack-${pack}`;
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

function ToolTableHead() {
  return <ColumnHeads names={["Name", "Layer", "Type", "Labels", "Surface", "Enabled", "Usage per role"]} />;
}

/** A project's merged tools: built-in → bundled → tenant → project, the inner layer winning. */
export function ProjectPage(props: {
  viewer: Viewer;
  at: ProjectRef;
  items: readonly ListingItem[];
  label?: string | undefined;
  roles: readonly string[];
}) {
  const { at: ref, items } = props;
  const count = items.reduce((sum, item) => sum + (item.kind === "tool" ? 1 : item.group.rows.length), 0);
  const plain: ToolRow[] = [];
  const bodies: Child[] = [];
  const collapsed: PackGroup[] = [];
  const flush = () => {
    if (plain.length === 0) return;
    bodies.push(
      <tbody>
        {plain.splice(0).map((row) => (
          <Row row={row} at={ref} />
        ))}
      </tbody>,
    );
  };
  const packHead = (group: PackGroup) =>
    `Pack ${group.pack} — ${group.rows.length} sub-tool${group.rows.length === 1 ? "" : "s"} · `;
  for (const item of items) {
    if (item.kind === "tool") {
      plain.push(item.row);
      continue;
    }
    flush();
    const { group } = item;
    const large = group.rows.length > COLLAPSED_PACK_SIZE;
    if (large) collapsed.push(group);
    bodies.push(
      <tbody class="pack" data-pack={group.pack}>
        <tr data-search={[group.pack, group.type].join(" ").toLowerCase()}>
          <th scope="rowgroup" colspan={7}>
            {packHead(group)}
            <LayerBadge layer={group.layer} /> {group.type} ·{" "}
            <a href={toolHref(ref, group.pack)}>pack page</a>
            <SourceState group={group} />
            {large ? (
              <>
                {" · "}
                <a href={`#${packId(group.pack)}`}>listed below, collapsed</a>
              </>
            ) : null}
          </th>
        </tr>
        {large ? null : group.rows.map((row) => <Row row={row} at={ref} sub />)}
      </tbody>,
    );
  }
  flush();
  return (
    <Layout
      title={`Tools of ${projectLabel(ref)}`}
      session="ok"
      viewer={props.viewer}
      crumbs={[{ label: "Projects", href: "/ui/" }, { label: projectLabel(ref) }]}
      tabs={{ at: ref, current: "tools" }}
    >
      <h1>Tools of {projectLabel(ref)}</h1>
      {props.label ? (
        <p>
          Only tools labelled <span class="label">{props.label}</span> ·{" "}
          <a href={projectHref(ref)}>show all</a>
        </p>
      ) : null}
      {/* The script shows the filter: it hides the rows that do not match, in this page alone. */}
      <div class="filter" id="tool-filter-box" hidden>
        <label>
          Filter
          <input
            type="search"
            id="tool-filter"
            placeholder="name, type, label or description"
            autocomplete="off"
            aria-describedby="tool-filter-count"
          />
        </label>
        <span class="muted" id="tool-filter-count" aria-live="polite" />
      </div>
      <div class="scroll">
        <table class="stack" id="tools">
          <caption>
            {`${count} tool${count === 1 ? "" : "s"}, merged built-in → bundled → tenant → project (the inner layer wins by name)`}
            {props.roles.length > 0 ? `; usage of the roles ${props.roles.join(", ")}` : "; no usage yet"}
          </caption>
          <ToolTableHead />
          {bodies}
        </table>
      </div>
      {collapsed.map((group) => (
        <details class="pack-group" id={packId(group.pack)} data-pack={group.pack}>
          <summary>
            {packHead(group)}
            <LayerBadge layer={group.layer} /> {group.type} ·{" "}
            <a href={toolHref(ref, group.pack)}>pack page</a>
            <SourceState group={group} />
          </summary>
          <div class="scroll">
            <table class="stack">
              <caption>{`The sub-tools of ${group.pack}`}</caption>
              <ToolTableHead />
              <tbody>
                {group.rows.map((row) => (
                  <Row row={row} at={ref} sub />
                ))}
              </tbody>
            </table>
          </div>
        </details>
      ))}
    </Layout>
  );
}

/** What a tool calls: an HTTP operation (`openapi` sub-tools) or an MCP server's tool (`mcp`, `mcp_server`). */
export type ToolTarget =
  | {
      readonly kind: "http";
      readonly method: string;
      readonly path: string;
      readonly operationId?: string | undefined;
    }
  | { readonly kind: "mcp"; readonly server: string; readonly tool: string };

function Target(props: { target: ToolTarget }) {
  const { target } = props;
  if (target.kind === "http") {
    return (
      <span>
        <code>{`${target.method.toUpperCase()} ${target.path}`}</code>
        {target.operationId ? (
          <>
            {" "}
            (operation <code>{target.operationId}</code>)
          </>
        ) : null}
      </span>
    );
  }
  return (
    <span>
      MCP tool <code>{target.tool}</code> of the server <code>{target.server}</code> (
      <code>{`mcp-servers/${target.server}.yaml`}</code>)
    </span>
  );
}

/** One layer's document of a tool. */
export interface LayerView {
  readonly layer: string;
  readonly etag: string | null;
  readonly body: string;
  readonly wins: boolean;
}

/** A pack page's account of its source: state, reason, sub-tools, and what was left out and why. */
function PackSourceFacts(props: { source: PackSource }) {
  const { source } = props;
  return (
    <>
      <h2 id="source">Source</h2>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          {source.status === "current" ? "current" : <span class="badge state-off">{source.status}</span>}
          {source.reason ? ` ${source.reason}` : ""}
        </dd>
        <dt>Sub-tools</dt>
        <dd>{`${source.subTools} (${source.name}__*)`}</dd>
      </dl>
      {source.notes.length > 0 ? (
        <>
          <h3>Left out ({source.notes.length})</h3>
          <ul>
            {source.notes.map((note) => (
              <li>{note}</li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

/** One tool: its state, normalised document, input schema, layers and raw YAML. */
export function ToolPage(props: {
  viewer: Viewer;
  at: ProjectRef;
  name: string;
  state: "found" | "disabled" | "invalid";
  tool?:
    | {
        layer: string;
        config: Record<string, unknown>;
        inputSchema: unknown;
        pack?: string | undefined;
        stale?: boolean | undefined;
        runs?: ToolTarget | undefined;
        /** A pack document's source: its state, sub-tool count and what it leaves out. */
        source?: PackSource | null | undefined;
        /** Who wrote its document and when; null where unknown (bundled, built-in). */
        audit: { createdAt: string | null; updatedAt: string | null; updatedBy: string | null };
      }
    | undefined;
  /** A built-in of the capability floor: no document can replace or disable it. */
  floor?: boolean;
  /** The layer whose document disables or breaks the tool. */
  stateLayer?: string | undefined;
  problem?: ProblemView | undefined;
  documentPath: string | null;
  layers: readonly LayerView[];
}) {
  const { at: ref, tool } = props;
  return (
    <Layout
      title={props.name}
      session="ok"
      viewer={props.viewer}
      crumbs={[
        { label: "Projects", href: "/ui/" },
        { label: projectLabel(ref), href: projectHref(ref) },
        { label: props.name },
      ]}
      tabs={{ at: ref, current: "tools" }}
    >
      <h1>{props.name}</h1>
      {props.state === "disabled" ? (
        <p class="notice">
          Disabled by the document of the <LayerBadge layer={props.stateLayer ?? ""} /> layer: no process is
          offered this tool, and layers below it do not show through.
        </p>
      ) : null}
      {props.state === "invalid" && props.problem ? (
        <>
          <p class="notice">
            The document of the <LayerBadge layer={props.stateLayer ?? ""} /> layer is invalid: the tool is
            left out of listings.
          </p>
          <Problem problem={props.problem} />
        </>
      ) : null}
      {tool ? (
        <>
          <dl class="facts">
            <dt>Layer</dt>
            <dd>
              <LayerBadge layer={tool.layer} />
            </dd>
            <dt>Type</dt>
            <dd>{String(tool.config.type)}</dd>
            <dt>Description</dt>
            <dd>{String(tool.config.description)}</dd>
            <dt>Labels</dt>
            <dd>
              <Labels labels={(tool.config.labels as string[]) ?? []} />
            </dd>
            <dt>Surface</dt>
            <dd>{tool.config.primary ? "primary" : "deferred"}</dd>
            {tool.runs ? (
              <>
                <dt>Runs</dt>
                <dd>
                  <Target target={tool.runs} />
                </dd>
              </>
            ) : null}
            {tool.audit.updatedAt ? (
              <>
                <dt>Updated</dt>
                <dd>
                  {tool.audit.updatedAt}
                  {tool.audit.updatedBy ? ` by ${tool.audit.updatedBy}` : ""}
                  {tool.audit.createdAt ? ` (created ${tool.audit.createdAt})` : ""}
                </dd>
              </>
            ) : null}
            {tool.pack ? (
              <>
                <dt>Pack</dt>
                <dd>
                  {tool.pack}
                  {tool.stale ? " (shown from its last known list: the source did not answer)" : ""}
                </dd>
              </>
            ) : null}
          </dl>
          {tool.source ? <PackSourceFacts source={tool.source} /> : null}
          <h2 id="document">Normalised document</h2>
          <Json value={tool.config} />
          <h2 id="schema">Input schema</h2>
          <Json value={tool.inputSchema} />
        </>
      ) : null}
      <h2 id="layers">Layers</h2>
      {props.documentPath === null ? (
        <p>
          {props.floor
            ? "A built-in tool of the capability floor: it has no document, and no layer can replace or disable it."
            : "A built-in tool: it has no document; a tenant or project document of this name would replace or disable it."}
        </p>
      ) : props.layers.length === 0 ? (
        <p>No layer holds {props.documentPath}.</p>
      ) : (
        <>
          <div class="scroll">
            <table>
              <caption>
                {`${props.documentPath} in the layers of ${projectLabel(ref)}, innermost first`}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Layer</th>
                  <th scope="col">ETag</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {props.layers.map((layer) => (
                  <tr>
                    <th scope="row">
                      <LayerBadge layer={layer.layer} />
                    </th>
                    <td>
                      <code>{layer.etag ?? "—"}</code>
                    </td>
                    <td>{layer.wins ? "wins" : "shadowed"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2 id="yaml">Raw YAML</h2>
          {props.layers.map((layer) => (
            <details open={layer.wins}>
              <summary>
                <LayerBadge layer={layer.layer} /> {layer.wins ? "(wins)" : "(shadowed)"}
              </summary>
              <pre>{layer.body}</pre>
            </details>
          ))}
        </>
      )}
    </Layout>
  );
}

/** The model view's outcome: a manifest built for an unsaved process. */
export interface ModelView {
  readonly budget: {
    readonly maxTools: number | null;
    readonly reserve: number;
    readonly limit: number | null;
  };
  readonly models: readonly {
    readonly model: string;
    readonly maxTools: number | null;
    readonly source: string;
  }[];
  readonly allowed: number;
  readonly onTheWire: readonly { readonly name: string; readonly description: string }[];
  readonly deferred: readonly string[];
  readonly demoted: readonly string[];
  readonly discoveryBlock: string;
  readonly demotedDiscoveryBlock: string;
}

function Names(props: { names: readonly string[]; at: ProjectRef; label: string }) {
  if (props.names.length === 0) return <p class="muted">None.</p>;
  return (
    <ul class="names" aria-label={props.label}>
      {props.names.map((name) => (
        <li>
          <a href={toolHref(props.at, name)}>{name}</a>
        </li>
      ))}
    </ul>
  );
}

/** "What would the model see": the manifest of a process of this project for a model chain. */
export function ModelPage(props: {
  viewer: Viewer;
  at: ProjectRef;
  query: { models: string; recipe: string };
  /** The model catalog's endpoints: what a chain may name. */
  catalog: readonly { instance: string; maxTools: number | null; models: readonly string[] }[];
  view?: ModelView | undefined;
  problem?: ProblemView | undefined;
}) {
  const { at: ref, view } = props;
  return (
    <Layout
      title={`What the model sees · ${projectLabel(ref)}`}
      session="ok"
      viewer={props.viewer}
      crumbs={[
        { label: "Projects", href: "/ui/" },
        { label: projectLabel(ref), href: projectHref(ref) },
        { label: "What the model sees" },
      ]}
      tabs={{ at: ref, current: "model" }}
    >
      <h1>What the model sees</h1>
      <p>
        The manifest a process of this project would get this turn, with every tool of the project allowed:
        built for a process that is never stored.
      </p>
      <form class="inline" method="get" action={modelHref(ref)}>
        <label>
          Model chain
          <input
            name="models"
            required
            value={props.query.models}
            placeholder="openai/gpt-4.1,anthropic/claude-sonnet-4"
            size={36}
            autocomplete="off"
            list="catalog-models"
            aria-describedby="catalog-hint"
          />
        </label>
        <label>
          Role (recipe)
          <input
            name="recipe"
            value={props.query.recipe}
            placeholder="default"
            size={12}
            autocomplete="off"
          />
        </label>
        <button type="submit">Show</button>
        <datalist id="catalog-models">
          {props.catalog.flatMap((provider) => provider.models.map((model) => <option value={model} />))}
        </datalist>
      </form>
      <p class="muted" id="catalog-hint">
        {`Comma-separated instance/slug, primary first; a slug the catalog does not list takes its instance's limit. Catalog: ${
          props.catalog
            .map(
              (provider) =>
                `${provider.instance} (${provider.maxTools === null ? "no limit" : `${provider.maxTools} tools`})`,
            )
            .join(", ") || "empty"
        }.`}
      </p>
      {props.problem ? <Problem problem={props.problem} /> : null}
      {view ? (
        <>
          <h2 id="budget">Budget</h2>
          <dl class="facts">
            <dt>maxTools</dt>
            <dd>{view.budget.maxTools ?? "no known limit"}</dd>
            <dt>Reserve</dt>
            <dd>{view.budget.reserve} (the engine's own action tool)</dd>
            <dt>Limit</dt>
            <dd>{view.budget.limit ?? "none"}</dd>
            <dt>Allowed tools</dt>
            <dd>{view.allowed}</dd>
          </dl>
          <div class="scroll">
            <table>
              <caption>The chain's limits: the smallest one binds</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">maxTools</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {view.models.map((model) => (
                  <tr>
                    <th scope="row">{model.model}</th>
                    <td>{model.maxTools ?? "—"}</td>
                    <td>{model.source}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2 id="wire">{`On the wire (${view.onTheWire.length})`}</h2>
          <div class="scroll">
            <table>
              <caption>Tools sent with their full schema every turn</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {view.onTheWire.map((tool) => (
                  <tr>
                    <th scope="row">
                      <a href={toolHref(ref, tool.name)}>{tool.name}</a>
                    </th>
                    <td>{tool.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2 id="deferred">{`Deferred (${view.deferred.length})`}</h2>
          <p class="muted">Invocable, named in the discovery block; their schemas come on request.</p>
          <Names names={view.deferred} at={ref} label="Deferred tools" />
          <h2 id="demoted">{`Demoted by the budget (${view.demoted.length})`}</h2>
          <p class="muted">Would be primary, but the limit leaves no room: in the order they were demoted.</p>
          <Names names={view.demoted} at={ref} label="Demoted tools" />
          <h2 id="discovery">Discovery blocks</h2>
          <h3>Deferred tools</h3>
          <pre>{view.discoveryBlock || "(empty)"}</pre>
          <h3>Demoted tools</h3>
          <pre>{view.demotedDiscoveryBlock || "(empty)"}</pre>
        </>
      ) : null}
    </Layout>
  );
}
