import { listAllObjects, type ObjectStore } from "../ports/object-store";
import type { Generations } from "./generations";

export interface StoreScanOptions {
  readonly store: ObjectStore;
  /** The marker a key belongs to; null for keys no cache depends on. */
  readonly markerOf: (key: string) => string | null;
  readonly generations: Pick<Generations, "bump">;
}

/**
 * Writes behind the service's back, where no bucket event reports them (the embedded default's
 * directory, a local S3 look-alike): each scan lists the whole store and bumps the marker of
 * every group of keys whose listing (keys and ETags) differs from the previous scan's. The first
 * scan only takes the baseline. Meant to run every few seconds in the local server.
 */
export class StoreScan {
  #previous: Map<string, string> | null = null;

  constructor(private readonly options: StoreScanOptions) {}

  /** One scan; answers the markers it bumped. A failed bump is tried again by the next scan. */
  async scan(): Promise<string[]> {
    const current = new Map<string, string>();
    for (const item of await listAllObjects(this.options.store, "")) {
      const marker = this.options.markerOf(item.key);
      if (marker !== null) current.set(marker, `${current.get(marker) ?? ""}${item.key}\n${item.etag}\n`);
    }
    const previous = this.#previous;
    if (previous === null) {
      this.#previous = current;
      return [];
    }
    const moved = [...new Set([...previous.keys(), ...current.keys()])].filter(
      (marker) => previous.get(marker) !== current.get(marker),
    );
    for (const marker of moved) await this.options.generations.bump(marker);
    this.#previous = current;
    return moved;
  }
}
