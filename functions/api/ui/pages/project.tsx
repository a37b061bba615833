/** @jsxImportSource hono/jsx */
import type { Child } from "hono/jsx";
import {
  ColumnHeads,
  enc,
  Labels,
  LayerBadge,
  Layout,
  type ProjectRef,
  projectHref,
  projectLabel,
  toolHref,
  type Viewer,
} from "./common";

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
export function SourceState(props: { group: PackGroup }) {
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

export function Usage(props: { usage: readonly RoleUsage[] }) {
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
export function searchText(row: ToolRow): string {
  return [row.name, row.type, ...row.labels, row.description].join(" ").toLowerCase();
}

export function Row(props: { row: ToolRow; at: ProjectRef; sub?: boolean }) {
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

export function packId(pack: string): string {
  return `pack-${pack}`;
}

export function ToolTableHead() {
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
