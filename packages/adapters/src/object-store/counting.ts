import type {
  DeleteOptions,
  DeleteResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  PutResult,
} from "@vance/core";

/** Calls per `ObjectStore` method. */
export interface ObjectStoreCallCounts {
  readonly get: number;
  readonly put: number;
  readonly delete: number;
  readonly list: number;
}

type Method = keyof ObjectStoreCallCounts;

/**
 * Decorator that counts calls per method and the most calls ever in flight at once, so a test
 * can assert "one GET per request" or "these two GETs were issued together".
 */
export class CountingObjectStore implements ObjectStore {
  readonly #inner: ObjectStore;
  #counts: Record<Method, number> = { get: 0, put: 0, delete: 0, list: 0 };
  #inFlight = 0;
  #maxInFlight = 0;

  constructor(inner: ObjectStore) {
    this.#inner = inner;
  }

  /** A snapshot of the calls so far. */
  get counts(): ObjectStoreCallCounts {
    return { ...this.#counts };
  }

  /** All calls so far, of every method. */
  get total(): number {
    return this.#counts.get + this.#counts.put + this.#counts.delete + this.#counts.list;
  }

  /** Calls started and not yet settled. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The largest number of calls in flight at the same moment since construction or `reset()`. */
  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  /** Zeroes the counts; `maxInFlight` restarts from the calls still in flight. */
  reset(): void {
    this.#counts = { get: 0, put: 0, delete: 0, list: 0 };
    this.#maxInFlight = this.#inFlight;
  }

  get(key: string, options?: GetOptions): Promise<GetResult> {
    return this.#track("get", () => this.#inner.get(key, options));
  }

  put(key: string, body: string, options?: PutOptions): Promise<PutResult> {
    return this.#track("put", () => this.#inner.put(key, body, options));
  }

  delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    return this.#track("delete", () => this.#inner.delete(key, options));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#track("list", () => this.#inner.list(prefix, options));
  }

  async #track<T>(method: Method, call: () => Promise<T>): Promise<T> {
    this.#counts[method]++;
    this.#inFlight++;
    this.#maxInFlight = Math.max(this.#maxInFlight, this.#inFlight);
    try {
      return await call();
    } finally {
      this.#inFlight--;
    }
  }
}
