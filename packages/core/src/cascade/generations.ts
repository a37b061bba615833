import { LRUCache } from "lru-cache";
import { StoreUnavailableError } from "../errors";
import { ID_PATTERN, layerProjectsOf, parseLayerDocumentKey, TENANT_PROJECT } from "../ids";
import type { GenerationStore } from "../ports/generation-store";
import { type Logger, silentLogger } from "../ports/logger";

/** The generation marker of one document layer: `documents/{tenant}/{project}` (`_tenant`: the tenant layer). */
export function layerMarker(tenant: string, project: string): string {
  return `documents/${tenant}/${project}`;
}

/** The generation marker of a tenant's secrets: bumped by every secret write and delete through the service. */
export function secretsMarker(tenant: string): string {
  return `secrets/${tenant}`;
}

/** Bumped by every learned tool limit. */
export const OBSERVED_LIMITS_MARKER = "observed-tool-limits";

/** Bumped by every write into the catalog bucket (the sync's `catalog.json` included). */
export const CATALOG_MARKER = "catalog";

/**
 * Everything a request about one project may read from a cache: its two document layers, its
 * tenant's secrets, the observed tool limits and the catalog. One state-store read of these makes the request see every
 * write that finished before it started.
 */
export function requestMarkers(tenant: string, project: string): string[] {
  return [
    ...layerProjectsOf(project).map((layerProject) => layerMarker(tenant, layerProject)),
    secretsMarker(tenant),
    OBSERVED_LIMITS_MARKER,
    CATALOG_MARKER,
  ];
}

/**
 * The layer marker of a documents-bucket key (`{tenant}/{project}/{path}`), or null for a key
 * that is no document of a layer: what a bucket event or a store scan bumps.
 */
export function markerOfDocumentKey(key: string): string | null {
  const parsed = parseLayerDocumentKey(key);
  if (parsed === null) return null;
  const { tenant, layerProject } = parsed;
  if (!ID_PATTERN.test(tenant) || (layerProject !== TENANT_PROJECT && !ID_PATTERN.test(layerProject)))
    return null;
  return layerMarker(tenant, layerProject);
}

/** What a cached value was read under: the marker's generation then, and when (epoch ms). */
export interface GenerationStamp {
  readonly generation: number;
  readonly at: number;
}

/** The safety net's default: anything cached is read again after 5 minutes, moved generation or not. */
export const DEFAULT_REVALIDATE_AFTER_MS = 5 * 60 * 1000;

/** How many markers an instance remembers; a forgotten one is simply read again. */
const KNOWN_MARKERS = 100_000;

export interface GenerationsOptions {
  readonly state: GenerationStore;
  /** Runs a resend of a pending bump after `ms` (`setTimeout` unless given; unreferenced on a server). */
  readonly retryLater?: (resend: () => void, ms: number) => void;
  /** Where a pending bump is reported (`generation.bump_pending`, `generation.bump_landed`). */
  readonly logger?: Logger;
  /** Epoch milliseconds. */
  readonly now?: () => number;
  /** The safety net for writes no event reported: nothing cached is used for longer than this. */
  readonly revalidateAfterMs?: number;
}

/** Counters for `/v1/metrics`. */
export interface GenerationStats {
  /** State-store requests that read generations (reads batched with a process record included). */
  readonly reads: number;
  /** Calls of `read` answered by a read another caller of this instance had asked for. */
  readonly sharedReads: number;
  readonly bumps: number;
}

/** A stored write's bump that has not landed: resent until one does. */
interface PendingBump {
  readonly landed: (() => void)[];
  attempts: number;
  readonly since: number;
}

/**
 * The reads of one set of markers on one instance: the one running, and the one queued behind it
 * that every caller arriving meanwhile shares.
 */
interface MarkerFlight {
  running: Promise<void> | undefined;
  queued: Promise<void> | undefined;
}

/**
 * Generation markers (DESIGN.md §2: cache only what can be revalidated cheaply and correctly):
 * every write through the service bumps the marker of what it changed, after the write. A warm
 * instance keeps what it read stamped with the marker's generation, and uses it while the
 * generation it knows is the same. Known generations only move forward, and a request reads
 * them (one state-store request) before it trusts them, so it sees every write that finished
 * before it started — on any instance. Writes behind the service's back reach the markers
 * through bucket events or the local store scan; the safety net ages out everything else.
 */
export class Generations {
  readonly #state: GenerationsOptions["state"];
  readonly #now: () => number;
  readonly #revalidateAfterMs: number;
  readonly #known: LRUCache<string, number>;
  /** Reads are numbered; a read that started before a marker was forgotten may not set it again. */
  #readSequence = 0;
  #forgottenAt = 0;
  #reads = 0;
  #sharedReads = 0;
  #bumps = 0;
  /** In-flight reads by their marker list; an entry lives only while a read of it runs or waits. */
  readonly #flights = new Map<string, MarkerFlight>();
  /** Markers a stored write could not bump yet, with what runs once the bump lands. */
  readonly #pending = new Map<string, PendingBump>();
  #settledWaiters: (() => void)[] = [];
  readonly #retryLater: (resend: () => void, ms: number) => void;
  readonly #logger: Logger;

  constructor(options: GenerationsOptions) {
    this.#state = options.state;
    this.#now = options.now ?? (() => Date.now());
    this.#revalidateAfterMs = options.revalidateAfterMs ?? DEFAULT_REVALIDATE_AFTER_MS;
    this.#retryLater = options.retryLater ?? ((resend, ms) => setTimeout(resend, ms));
    this.#logger = options.logger ?? silentLogger;
    // Counted through `maxSize`, not `max`: `max` allocates all 100,000 slots up front, ~12 ms of
    // every cold start (issue 15's bench/cold-start).
    this.#known = new LRUCache({
      maxSize: KNOWN_MARKERS,
      sizeCalculation: () => 1,
      // A straggling read could otherwise set a forgotten marker back to an older generation.
      dispose: (_generation, _marker, reason) => {
        if (reason === "evict") this.#forgottenAt = this.#readSequence;
      },
    });
  }

  /**
   * Reads these markers in one state-store request that started after this call: the caller sees
   * every write that finished before it called. Concurrent callers of one instance share reads —
   * a read already running started too early for a caller arriving now, so every caller arriving
   * while one runs shares the single read queued behind it.
   */
  read(markers: readonly string[]): Promise<void> {
    const key = markers.join("\n");
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      flight = { running: undefined, queued: undefined };
      this.#flights.set(key, flight);
    }
    if (flight.running === undefined) return this.#startRead(key, flight, markers);
    if (flight.queued !== undefined) {
      this.#sharedReads++;
      return flight.queued;
    }
    const queuedFlight = flight;
    const queued = flight.running.then(ignore, ignore).then(() => {
      queuedFlight.queued = undefined;
      return this.#startRead(key, queuedFlight, markers);
    });
    flight.queued = queued;
    return queued;
  }

  #startRead(key: string, flight: MarkerFlight, markers: readonly string[]): Promise<void> {
    const running: Promise<void> = this.readAlong(markers, async () => ({
      value: undefined,
      generations: await this.#state.getGenerations(markers),
    })).finally(() => {
      if (flight.running === running) flight.running = undefined;
      if (flight.running === undefined && flight.queued === undefined) this.#flights.delete(key);
    });
    flight.running = running;
    return running;
  }

  /**
   * Runs a read that answers these markers' generations along with its own value in one request
   * (`ProcessStore.getProcessAndGenerations`), and remembers the generations.
   */
  async readAlong<T>(
    markers: readonly string[],
    read: () => Promise<{ readonly value: T; readonly generations: readonly number[] }>,
  ): Promise<T> {
    const sequence = ++this.#readSequence;
    this.#reads++;
    const { value, generations } = await read();
    markers.forEach((marker, i) => {
      this.#observe(marker, generations[i] ?? 0, sequence);
    });
    return value;
  }

  /** Reads the markers this instance knows no generation of; none unknown, no request. */
  async ensure(markers: readonly string[]): Promise<void> {
    const unknown = markers.filter((marker) => !this.#known.has(marker));
    if (unknown.length > 0) await this.read(unknown);
  }

  /** Bumps a marker after a write; this instance knows the new generation at once. */
  async bump(marker: string): Promise<number> {
    const sequence = ++this.#readSequence;
    const generation = await this.#state.bumpGeneration(marker);
    this.#bumps++;
    this.#observe(marker, generation, sequence);
    // A bump that lands after a stored write covers every earlier write of the marker.
    this.#landed(marker);
    return generation;
  }

  /**
   * Bumps a marker after a write the object store took, which stands whatever happens here: the
   * new generation, or `"pending"` when the state store cannot be reached. Then the bump is resent
   * in the background (100 ms doubling to 500 ms) until one lands, and `landed` runs; meanwhile no
   * instance can read the marker either, so none serves the old document past the moment the
   * state store answers again by more than one resend interval. Other errors throw.
   */
  async bumpAfterWrite(marker: string, landed: () => void): Promise<number | "pending"> {
    try {
      return await this.bump(marker);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      const pending = this.#pending.get(marker);
      if (pending) {
        pending.landed.push(landed);
        return "pending";
      }
      this.#pending.set(marker, { landed: [landed], attempts: 0, since: this.#now() });
      this.#logger.warn("generation.bump_pending", { marker, reason: error.code, error: error.reason });
      this.#resendLater(marker);
      return "pending";
    }
  }

  /** Whether a write into `marker`'s data is stored but its bump has not landed yet. */
  isPending(marker: string): boolean {
    return this.#pending.has(marker);
  }

  /**
   * Waits until every pending bump landed, or `withinMs` passed (before a Lambda answers, or a
   * server exits). `true` when none is pending.
   */
  async settled(withinMs: number): Promise<boolean> {
    if (this.#pending.size === 0) return true;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.#wakeSettled();
    }, withinMs);
    try {
      while (this.#pending.size > 0 && !timedOut) {
        await new Promise<void>((resolve) => this.#settledWaiters.push(resolve));
      }
    } finally {
      clearTimeout(timer);
    }
    return this.#pending.size === 0;
  }

  #resendLater(marker: string): void {
    const pending = this.#pending.get(marker);
    if (!pending) return;
    // At most half a second apart: once the state store answers again, the bump lands within that.
    const delay = Math.min(500, 100 * 2 ** pending.attempts);
    this.#retryLater(() => {
      if (this.#pending.get(marker) !== pending) return;
      pending.attempts++;
      this.bump(marker).catch(() => this.#resendLater(marker));
    }, delay);
  }

  #landed(marker: string): void {
    const pending = this.#pending.get(marker);
    if (!pending) return;
    this.#pending.delete(marker);
    this.#logger.info("generation.bump_landed", {
      marker,
      attempts: pending.attempts,
      pendingMs: this.#now() - pending.since,
    });
    for (const landed of pending.landed) landed();
    this.#wakeSettled();
  }

  #wakeSettled(): void {
    const waiters = this.#settledWaiters;
    this.#settledWaiters = [];
    for (const wake of waiters) wake();
  }

  /** The stamp for a value about to be read from a store under `marker`'s known generation. */
  stamp(marker: string): GenerationStamp {
    return { generation: this.#known.get(marker) ?? -1, at: this.#now() };
  }

  /** Whether a value read under `stamp` may still be used: its generation is the known one and the safety net has not aged it out. */
  isCurrent(marker: string, stamp: GenerationStamp): boolean {
    const known = this.#known.get(marker);
    return (
      known !== undefined && known === stamp.generation && this.#now() - stamp.at < this.#revalidateAfterMs
    );
  }

  get stats(): GenerationStats {
    return { reads: this.#reads, sharedReads: this.#sharedReads, bumps: this.#bumps };
  }

  #observe(marker: string, generation: number, sequence: number): void {
    const known = this.#known.get(marker);
    if (known === undefined && sequence <= this.#forgottenAt) return;
    if (known === undefined || generation > known) this.#known.set(marker, generation);
  }
}

function ignore(): void {}
