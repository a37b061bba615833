import type { Generations } from "./generations";

/** What a `CascadeRead` asks of the generations it is handed. */
export type GenerationReads = Pick<Generations, "read" | "ensure" | "readAlong">;

/**
 * One request's read of the generation markers (DESIGN.md §2), made where the request enters —
 * `ServerToolService.snapshot` for a route, `ProcessService` with the process record, a route of
 * the model catalog — and carried below by the request's `ToolSnapshot`: nothing under the
 * snapshot takes a read, and no method defaults one (`request-reads.test.ts`). The first ask of a marker
 * reads it (one state-store request, shared by concurrent requests through `Generations.read`),
 * so the request sees every write that finished before it began; a later ask of markers this
 * request read already is answered from what it read (`Generations.ensure`: no request unless the
 * instance has forgotten one of them).
 */
export class CascadeRead {
  readonly #read = new Set<string>();

  private constructor() {}

  /**
   * A request that has read no marker yet: its first ask of each reads it. What runs below the
   * request is handed this read — a nested call, the model an invocation picks — never a new one.
   */
  static begin(): CascadeRead {
    return new CascadeRead();
  }

  /** Whether this request has read every one of these markers. */
  has(markers: readonly string[]): boolean {
    return markers.every((marker) => this.#read.has(marker));
  }

  /**
   * Makes these markers' generations current for this request: read in one state-store request
   * unless the request read them all already. Without generations, nothing to read.
   */
  async ensure(generations: GenerationReads | undefined, markers: readonly string[]): Promise<void> {
    if (!generations) return;
    if (this.has(markers)) return generations.ensure(markers);
    await generations.read(markers);
    this.#mark(markers);
  }

  /** Runs a read that answers these markers' generations with its own value (`Generations.readAlong`). */
  async readAlong<T>(
    generations: GenerationReads,
    markers: readonly string[],
    read: () => Promise<{ readonly value: T; readonly generations: readonly number[] }>,
  ): Promise<T> {
    const value = await generations.readAlong(markers, read);
    this.#mark(markers);
    return value;
  }

  #mark(markers: readonly string[]): void {
    for (const marker of markers) this.#read.add(marker);
  }
}
