/** @jsxImportSource hono/jsx */
import { Layout, projectHref, type Viewer } from "./common";

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
