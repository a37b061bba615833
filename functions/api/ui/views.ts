/**
 * What the listing shows, read from the services: rows, packs, hidden documents, a tool's
 * details and the model view. The pages render these; the routes pick which one.
 */
import {
  commaList,
  Errors,
  inCapabilityFloor,
  issuesToFieldErrors,
  operationTarget,
  packOf,
  type ResolvedTool,
  SpawnRequestSchema,
  type ToolSnapshot,
  toolDocumentPath,
  toolNameFromPath,
  toolNameProblem,
} from "@vance/core";
import * as v from "valibot";
import type { AppServices } from "../app-services";
import type {
  LayerView,
  ListingItem,
  ModelView,
  PackGroup,
  ProjectRef,
  RoleUsage,
  ToolRow,
  ToolTarget,
} from "./pages";

/** What the listing reads: the services the API's routes use, nothing that writes a document. */
export type UiServices = Pick<
  AppServices,
  "verifier" | "logger" | "tools" | "documents" | "usage" | "processes" | "budget" | "catalog"
>;

/** Calls and look-ups per tool, per role. */
function usageByTool(report: Awaited<ReturnType<UiServices["usage"]["byRole"]>>): Map<string, RoleUsage[]> {
  const byTool = new Map<string, RoleUsage[]>();
  for (const { role, tools } of report.roles) {
    for (const tool of tools) {
      const entries = byTool.get(tool.name) ?? [];
      entries.push({ role, calls: tool.calls, discoveryHits: tool.discoveryHits });
      byTool.set(tool.name, entries);
    }
  }
  return byTool;
}

function rowOf(tool: ResolvedTool, usage: Map<string, RoleUsage[]>): ToolRow {
  return {
    name: tool.name,
    layer: tool.layer,
    type: tool.config.type,
    description: tool.config.description,
    labels: tool.config.labels,
    primary: tool.config.primary,
    enabled: "yes",
    usage: usage.get(tool.name) ?? [],
  };
}

/**
 * The project's merged tools with their packs grouped, and the documents the merge leaves out
 * because they disable a tool (or do not parse), so a reader sees why a tool is missing.
 */
export async function listing(
  services: UiServices,
  at: ProjectRef,
  label: string | undefined,
): Promise<{ items: ListingItem[]; roles: string[] }> {
  const { tenant, project } = at;
  const snapshot = await services.tools.snapshot(tenant, project);
  const [{ tools, invalid, packs: sources, hidden }, report] = await Promise.all([
    snapshot.listing(),
    services.usage.byRole(tenant, project),
  ]);
  const usage = usageByTool(report);
  const shown = tools.filter((tool) => label === undefined || tool.config.labels.includes(label));
  const packs = new Map<string, PackGroup & { rows: ToolRow[] }>();
  const items: ListingItem[] = [];
  for (const tool of shown) {
    if (tool.kind !== "pack-sub-tool") {
      items.push({ kind: "tool", row: rowOf(tool, usage) });
      continue;
    }
    let group = packs.get(tool.pack.name);
    if (!group) {
      group = { pack: tool.pack.name, layer: tool.layer, type: tool.config.type, rows: [] };
      packs.set(tool.pack.name, group);
      items.push({ kind: "pack", group });
    }
    group.rows.push(rowOf(tool, usage));
  }
  // Every pack document has its head row, with its source's state: one whose source fails is
  // said so, never left out for want of sub-tools.
  for (const source of sources) {
    if (label !== undefined && !source.labels.includes(label)) continue;
    const group = packs.get(source.name);
    const state = { status: source.status, reason: source.reason, leftOut: source.notes.length };
    if (group) {
      Object.assign(group, state);
      continue;
    }
    const created = { pack: source.name, layer: source.layer, type: "pack", rows: [], ...state };
    packs.set(source.name, created);
    items.push({ kind: "pack", group: created });
  }
  if (label === undefined) {
    // A document no tool page can show (its name breaks the rules, or is the floor's): its row says why.
    for (const document of invalid) {
      const name = toolNameFromPath(document.path);
      if (name !== null && toolNameProblem(name) === null && !inCapabilityFloor(name)) continue;
      items.push({
        kind: "tool",
        row: {
          name: name ?? document.path,
          layer: document.layer,
          type: "—",
          description: document.error.message,
          labels: [],
          primary: false,
          enabled: "invalid",
          usage: [],
        },
      });
    }
    // A stored document that disables its tool, or does not parse: the listing names it hidden.
    for (const entry of hidden) {
      if (entry.layer !== "project" && entry.layer !== "tenant") continue;
      items.push({
        kind: "tool",
        row: {
          name: entry.name,
          layer: entry.layer,
          type: "—",
          description: "",
          labels: [],
          primary: false,
          enabled: entry.status === "disabled" ? "no" : "invalid",
          usage: usage.get(entry.name) ?? [],
        },
      });
    }
  }
  const nameOf = (item: ListingItem) => (item.kind === "tool" ? item.row.name : item.group.pack);
  items.sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  return { items, roles: report.roles.map((role) => role.role) };
}

/** What a tool calls, when it is an OpenAPI operation or an MCP server's tool. */
function targetOf(tool: ResolvedTool): ToolTarget | undefined {
  const server = tool.config.parameters.server;
  if (tool.kind === "pack-sub-tool") {
    const operation = operationTarget(tool.pack.tool);
    if (operation) {
      const operationId = tool.pack.tool.sourceName.includes(" ") ? undefined : tool.pack.tool.sourceName;
      return { kind: "http", method: operation.method, path: operation.path, operationId };
    }
    if (typeof server === "string") return { kind: "mcp", server, tool: tool.pack.tool.sourceName };
    return undefined;
  }
  const toolName = tool.config.parameters.toolName;
  return typeof server === "string" && typeof toolName === "string"
    ? { kind: "mcp", server, tool: toolName }
    : undefined;
}

/** One tool as the cascade resolves it, and its document in every layer that holds one. */
export async function toolDetails(services: UiServices, at: ProjectRef, name: string) {
  const { tenant, project } = at;
  const snapshot = await services.tools.snapshot(tenant, project);
  const found = await snapshot.lookup(name);
  if (found.status === "not_found") throw Errors.toolNotFound(name);
  const builtIn = found.status === "found" && found.tool.layer === "builtin";
  const documentPath = builtIn ? null : toolDocumentPath(packOf(name) ?? name);
  const hits = documentPath === null ? [] : await services.documents.layers(tenant, project, documentPath);
  const layers: LayerView[] = hits.map((hit, index) => ({
    layer: hit.layer,
    etag: hit.etag,
    body: hit.body,
    wins: index === 0,
  }));
  if (found.status === "found") {
    const { tool } = found;
    return {
      state: "found" as const,
      tool: {
        layer: tool.layer,
        config: { ...tool.config },
        inputSchema: tool.inputSchema,
        pack: tool.pack?.name,
        stale: tool.stale,
        source: tool.kind === "document" ? await snapshot.packSource(name) : null,
        runs: targetOf(tool),
        audit: {
          createdAt: tool.audit?.createdAt ?? null,
          createdBy: tool.audit?.createdBy ?? null,
          updatedAt: tool.audit?.updatedAt ?? null,
          updatedBy: tool.audit?.updatedBy ?? null,
        },
      },
      floor: inCapabilityFloor(name),
      documentPath,
      layers,
    };
  }
  return {
    state: found.status,
    stateLayer: found.layer,
    problem:
      found.status === "invalid"
        ? {
            status: found.error.status,
            code: found.error.code,
            detail: found.error.message,
            errors: found.error.errors,
          }
        : undefined,
    documentPath,
    layers,
  };
}

/**
 * The manifest of a process that allows every tool of the project, for the chain in the query:
 * `ProcessService.preview`, so no process is stored to render the page.
 */
export async function modelView(
  services: UiServices,
  snapshot: ToolSnapshot,
  query: { models: string; recipe: string },
): Promise<ModelView> {
  const { tenant } = snapshot;
  // The page's snapshot (its one read of the generations): the listing, the budget and the
  // preview share it.
  const tools = await snapshot.tools();
  const parsed = v.safeParse(SpawnRequestSchema, {
    models: commaList(query.models),
    ...(query.recipe.trim() === "" ? {} : { recipe: query.recipe.trim() }),
    engineDefault: tools.map((tool) => tool.name),
  });
  if (!parsed.success) {
    throw Errors.validationFailed(
      "the query does not describe a process",
      issuesToFieldErrors(parsed.issues, undefined, [], SpawnRequestSchema),
    );
  }
  const request = parsed.output;
  const budget = await services.budget.budgetForChain(request.models, { tenant, catalog: snapshot.catalog });
  const { record, manifest } = await services.processes.preview(snapshot, request, "openai");
  const descriptions = new Map(tools.map((tool) => [tool.name, tool.config.description]));
  const demoted = new Set(manifest.demoted);
  return {
    budget: manifest.budget,
    models: budget.models,
    allowed: record.allowedTools.length,
    onTheWire: manifest.primary.map((name) => ({ name, description: descriptions.get(name) ?? "" })),
    deferred: manifest.deferred.filter((name) => !demoted.has(name)),
    demoted: [...manifest.demoted],
    discoveryBlock: manifest.discoveryBlock,
    demotedDiscoveryBlock: manifest.demotedDiscoveryBlock,
  };
}
