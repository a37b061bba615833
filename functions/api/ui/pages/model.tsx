/** @jsxImportSource hono/jsx */
import {
  Layout,
  modelHref,
  Problem,
  type ProblemView,
  type ProjectRef,
  projectHref,
  projectLabel,
  toolHref,
  type Viewer,
} from "./common";

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

export function Names(props: { names: readonly string[]; at: ProjectRef; label: string }) {
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
            placeholder="e.g. openai/gpt-4.1, anthropic/claude-sonnet-4"
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
            placeholder="none: every tool"
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
