import { TENANT_PROJECT } from "./project";

/** A document layer that a project folder of the store holds, or one that none holds. */
export type LayerName = "project" | "tenant" | "bundled" | "builtin";

/**
 * What a request for a project reads of each stored layer: its own layer's (null when the
 * request is for `_tenant`, which addresses the tenant layer itself) and the tenant layer's.
 */
export interface ReadLayers<T> {
  readonly project: T | null;
  readonly tenant: T;
}

/**
 * The stored layers a request for `project` reads — its own and the tenant's, the tenant's
 * once for `_tenant` — each mapped by `of(layerProject)`. The one spelling of that rule: every
 * read of both layers (a lookup's keys, a listing, the generation markers) goes through it.
 */
export function readLayersOf<T>(project: string, of: (layerProject: string) => T): ReadLayers<T> {
  return { project: project === TENANT_PROJECT ? null : of(project), tenant: of(TENANT_PROJECT) };
}

/** The values of `layers`, innermost first: the project's (when read) and the tenant's. */
export function innermostFirst<T>(layers: ReadLayers<T>): T[] {
  return layers.project === null ? [layers.tenant] : [layers.project, layers.tenant];
}

/** The layer folders a request for `project` reads, innermost first: its own and the tenant's (once for `_tenant`). */
export function layerProjectsOf(project: string): readonly string[] {
  return innermostFirst(readLayersOf(project, (layerProject) => layerProject));
}

/**
 * The project folder a document layer reads, as a request for `project` addresses it: the project
 * layer its own, the tenant layer `_tenant`; the bundled and built-in layers have none (null).
 */
export function layerProjectOf(layer: LayerName, project: string): string | null {
  if (layer === "project") return project;
  return layer === "tenant" ? TENANT_PROJECT : null;
}
