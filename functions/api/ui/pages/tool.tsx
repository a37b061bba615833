/** @jsxImportSource hono/jsx */
import type { PackSource } from "@vance/core";
import {
  Json,
  Labels,
  LayerBadge,
  Layout,
  Problem,
  type ProblemView,
  type ProjectRef,
  projectHref,
  projectLabel,
  type Viewer,
} from "./common";

/** What a tool calls: an HTTP operation (`openapi` sub-tools) or an MCP server's tool (`mcp`, `mcp_server`). */
export type ToolTarget =
  | {
      readonly kind: "http";
      readonly method: string;
      readonly path: string;
      readonly operationId?: string | undefined;
    }
  | { readonly kind: "mcp"; readonly server: string; readonly tool: string };

export function Target(props: { target: ToolTarget }) {
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
export function PackSourceFacts(props: { source: PackSource }) {
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
