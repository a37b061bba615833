import { CascadeRead } from "../cascade/cascade-read";
import type { DispatchResult, ToolDispatcher } from "../dispatch/tool-dispatcher";
import type { ProcessKey, ProcessRecord } from "../ports/state-store";
import type { ProcessBookkeeping } from "../surface/process-bookkeeping";
import {
  type PreparedProcess,
  type ProcessRecords,
  type SpawnRequest,
  servedAllowSet,
} from "../surface/process-records";
import type { Manifest, ToolSurface } from "../surface/tool-surface";
import type { WireFormat } from "../surface/wire";
import type { ToolCatalog } from "../tools/tool-catalog";
import type { ToolSnapshot } from "../tools/tool-snapshot";

export interface ProcessServiceOptions {
  /** Where each request takes its one snapshot of the project's tools. */
  readonly tools: Pick<ToolCatalog, "snapshot" | "begin">;
  readonly records: Pick<ProcessRecords, "prepare" | "create" | "get" | "end" | "draft" | "allowSet">;
  readonly surface: Pick<ToolSurface, "manifest" | "manifestBody" | "preview" | "admit" | "wasDeferred">;
  readonly dispatcher: Pick<ToolDispatcher, "invoke">;
  readonly bookkeeping: Pick<ProcessBookkeeping, "called">;
}

/**
 * Processes (spec §6, §13, §14), as the API serves them: spawn and read the record
 * (`ProcessRecords`), the turn's manifest (`ToolSurface`), and calls inside the process — the
 * allow set checked by the `ToolDispatcher`, the use left behind by `ProcessBookkeeping`.
 */
export class ProcessService {
  constructor(private readonly options: ProcessServiceOptions) {}

  /**
   * Resolves the recipe once and stores the frozen allow set. A chain whose limit cannot hold
   * the capability floor is refused before anything is stored (422 `budget_floor_exceeded`);
   * the answer names the referenced packs whose source is not current and what named nothing.
   */
  async spawn(tenant: string, project: string, request: SpawnRequest): Promise<PreparedProcess> {
    // The request's one snapshot of the project's tools (its one read of the generations),
    // passed to everything below.
    const snapshot = await this.options.tools.begin(tenant, project);
    const prepared = await this.options.records.prepare(snapshot, request);
    await this.options.surface.admit(prepared.record, snapshot);
    await this.options.records.create(prepared.record);
    return prepared;
  }

  /** The stored record; 404 `process_not_found`. */
  get(tenant: string, project: string, processId: string): Promise<ProcessRecord> {
    return this.options.records.get(tenant, project, processId, CascadeRead.begin());
  }

  /** Ends a process: its record is deleted and its place in the tenant's quota given back; 404 `process_not_found`. */
  end(tenant: string, project: string, processId: string): Promise<void> {
    return this.options.records.end(tenant, project, processId);
  }

  /**
   * The turn's manifest: the tools array (sorted by name), the buckets, the budget and the two
   * discovery blocks. The record is read with the generations; the surface answers from that read.
   */
  async manifest(key: ProcessKey, format: WireFormat, additional: readonly string[] = []): Promise<Manifest> {
    const { record, snapshot } = await this.#turn(key);
    return this.options.surface.manifest(record, snapshot, format, additional);
  }

  /** {@link manifest} as the JSON bytes the route sends, encoded once per unchanged turn. */
  async manifestBody(
    key: ProcessKey,
    format: WireFormat,
    additional: readonly string[] = [],
    names?: string,
  ): Promise<Uint8Array<ArrayBuffer>> {
    const { record, snapshot } = await this.#turn(key);
    return this.options.surface.manifestBody(record, snapshot, format, additional, names);
  }

  /**
   * What a process spawned with `request` would see this turn — its allow set and manifest — with
   * no process stored: for pages that show it (the web listing's model view), from the page's snapshot.
   */
  async preview(
    snapshot: ToolSnapshot,
    request: SpawnRequest,
    format: WireFormat,
  ): Promise<{ readonly record: ProcessRecord; readonly manifest: Manifest }> {
    const record = await this.options.records.draft(snapshot, request);
    return { record, manifest: await this.options.surface.preview(record, snapshot, format) };
  }

  /**
   * A call inside the process: allow set, activation bookkeeping, usage counting. `skillTools`
   * are the turn's (the manifest's `?with=`): the meta-tools then see the array the model sees.
   * `served` (the MCP surface) adds `invoke_tool` to the allow set (`servedAllowSet`).
   */
  async invoke(
    key: ProcessKey,
    name: string,
    params: unknown,
    skillTools: readonly string[] = [],
    options: { readonly served?: boolean } = {},
  ): Promise<DispatchResult> {
    const { record, snapshot } = await this.#turn(key);
    const result = await this.options.dispatcher.invoke({
      caller: {
        tenant: record.tenant,
        project: record.project,
        processId: record.processId,
        role: record.role,
      },
      name,
      params,
      allowedTools: options.served
        ? servedAllowSet(this.options.records.allowSet(record))
        : this.options.records.allowSet(record),
      clientTools: record.clientTools,
      process: record,
      skillTools,
      // The record was read with the generations: the snapshot needed no second read.
      snapshot,
    });
    // Asked only when the call may activate the tool: from the surface this turn's manifest built.
    await this.options.bookkeeping.called(record, name, result, () =>
      this.options.surface.wasDeferred(record, snapshot, name, skillTools),
    );
    return result;
  }

  /**
   * The process's record, read with the generations (the request's one read of them), and the
   * snapshot of its project's tools under that read: no second state-store request.
   */
  async #turn(key: ProcessKey): Promise<{ record: ProcessRecord; snapshot: ToolSnapshot }> {
    const read = CascadeRead.begin();
    const record = await this.options.records.get(key.tenant, key.project, key.processId, read);
    return { record, snapshot: await this.options.tools.snapshot(record.tenant, record.project, read) };
  }
}
