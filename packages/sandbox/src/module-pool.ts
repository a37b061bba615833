import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import {
  newQuickJSAsyncWASMModuleFromVariant,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSAsyncWASMModule,
  type QuickJSWASMModule,
  RELEASE_ASYNC,
  RELEASE_SYNC,
} from "quickjs-emscripten";

const require = createRequire(import.meta.url);

let compiled: Promise<{ sync: WebAssembly.Module; asyncify: WebAssembly.Module }> | undefined;

// Compiling the .wasm dominates module creation (~15 ms); instantiating an already compiled
// WebAssembly.Module takes ~1 ms, which is what lets the pool grow on demand.
function compileVariants(): Promise<{ sync: WebAssembly.Module; asyncify: WebAssembly.Module }> {
  compiled ??= (async () => {
    const [sync, asyncify] = await Promise.all(
      ["@jitl/quickjs-wasmfile-release-sync/wasm", "@jitl/quickjs-wasmfile-release-asyncify/wasm"].map(
        async (specifier) => WebAssembly.compile(await readFile(require.resolve(specifier))),
      ),
    );
    return { sync: sync!, asyncify: asyncify! };
  })();
  return compiled;
}

/** A QuickJS WebAssembly instance and the linear memory it runs in. */
export interface LoadedModule<M extends QuickJSWASMModule = QuickJSWASMModule> {
  module: M;
  memory: WebAssembly.Memory;
}

/** Size of the linear memory the build starts with (its INITIAL_MEMORY); static data and C stack live in it. */
export const INITIAL_MEMORY_BYTES = 16 * 1024 * 1024;

/**
 * Room above the heap limit: the host still allocates in the module to read what a script left
 * behind after it reached its limit.
 */
const HOST_HEADROOM_BYTES = 8 * 1024 * 1024;

const PAGE_BYTES = 64 * 1024;

// quickjs-emscripten 0.31's release builds have no malloc_usable_size, so QuickJS counts every
// allocation as 8 bytes and JS_SetMemoryLimit only stops single allocations larger than the limit.
// A linear memory with a maximum is what actually bounds a script's heap.
function boundedMemory(maxHeapBytes: number): WebAssembly.Memory {
  return new WebAssembly.Memory({
    initial: INITIAL_MEMORY_BYTES / PAGE_BYTES,
    maximum: Math.ceil((INITIAL_MEMORY_BYTES + maxHeapBytes + HOST_HEADROOM_BYTES) / PAGE_BYTES),
  });
}

/** Creates a fresh QuickJS module of the synchronous release variant. */
export async function loadSyncModule(maxHeapBytes: number): Promise<LoadedModule> {
  const { sync } = await compileVariants();
  const memory = boundedMemory(maxHeapBytes);
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmModule: sync, wasmMemory: memory }),
  );
  return { module, memory };
}

/** Creates a fresh QuickJS module of the asyncify release variant. */
export async function loadAsyncifyModule(
  maxHeapBytes: number,
): Promise<LoadedModule<QuickJSAsyncWASMModule>> {
  const { asyncify } = await compileVariants();
  const memory = boundedMemory(maxHeapBytes);
  const module = await newQuickJSAsyncWASMModuleFromVariant(
    newVariant(RELEASE_ASYNC, { wasmModule: asyncify, wasmMemory: memory }),
  );
  return { module, memory };
}

/**
 * Asyncify modules, one per concurrent invocation: Emscripten's asyncify keeps a single saved
 * stack per module, and a second `evalCodeAsync` on a module that is already suspended aborts
 * the process. `acquire` never waits for a module to come back: a script suspended in
 * `vance.tools.call` may be waiting for a nested script that needs a module of its own.
 */
export class AsyncifyModulePool {
  private readonly idle: LoadedModule<QuickJSAsyncWASMModule>[] = [];
  private inUse = 0;
  private peakInUse = 0;
  private created = 0;

  constructor(
    private readonly maxIdle: number,
    private readonly load: () => Promise<LoadedModule<QuickJSAsyncWASMModule>>,
  ) {}

  /** Hands out an idle module, or creates one. */
  async acquire(): Promise<LoadedModule<QuickJSAsyncWASMModule>> {
    this.inUse += 1;
    this.peakInUse = Math.max(this.peakInUse, this.inUse);
    const module = this.idle.pop();
    if (module) return module;
    try {
      const loaded = await this.load();
      this.created += 1;
      return loaded;
    } catch (error) {
      this.inUse -= 1;
      throw error;
    }
  }

  /** Takes a module back after a clean run; beyond `maxIdle` it is left to the garbage collector. */
  release(module: LoadedModule<QuickJSAsyncWASMModule>): void {
    this.inUse -= 1;
    if (this.idle.length < this.maxIdle) this.idle.push(module);
  }

  /**
   * Forgets a module that must not be reused: it aborted, or its linear memory grew (WebAssembly
   * memory never shrinks, and the heap limit assumes a module that starts at its initial size).
   */
  discard(): void {
    this.inUse -= 1;
  }

  /** Drops all idle modules. */
  clear(): void {
    this.idle.length = 0;
  }

  /** Counters for tests and diagnostics. */
  stats(): { idle: number; inUse: number; peakInUse: number; created: number } {
    return { idle: this.idle.length, inUse: this.inUse, peakInUse: this.peakInUse, created: this.created };
  }
}
