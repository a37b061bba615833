import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSWASMModule,
  RELEASE_SYNC,
} from "quickjs-emscripten";
import { type MemoryLayout, memoryLayout } from "./snapshot";

const require = createRequire(import.meta.url);

/** A QuickJS WebAssembly instance and the linear memory it runs in. */
export interface LoadedModule {
  module: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  /** Where the build keeps its state, when known: a context made in it is then reused (snapshot.ts). */
  layout: MemoryLayout | null;
  /** Nothing ran in it yet: every byte above its heap is still zero, so a snapshot may be taken. */
  fresh: boolean;
}

/** QuickJS's build compiled, and where it keeps its state in memory (null: a build not recognised). */
export interface CompiledQuickJS {
  readonly module: WebAssembly.Module;
  readonly layout: MemoryLayout | null;
}

/** Size of the linear memory the build starts with (its INITIAL_MEMORY); static data and C stack live in it. */
export const INITIAL_MEMORY_BYTES = 16 * 1024 * 1024;

/**
 * Room above the heap limit: the host still allocates in the module to read what a script left
 * behind after it reached its limit.
 */
const HOST_HEADROOM_BYTES = 8 * 1024 * 1024;

const PAGE_BYTES = 64 * 1024;

/** The installed package's `.wasm` file; a bundle that has no `node_modules` ships a copy and names it. */
export function installedQuickJSWasm(): string {
  return require.resolve("@jitl/quickjs-wasmfile-release-sync/wasm");
}

const compiled = new Map<string, Promise<CompiledQuickJS>>();

/**
 * The synchronous release build of QuickJS (`wasmFile`, the installed one by default), compiled
 * once per process. Compiling dominates module creation (~15 ms); a compiled `WebAssembly.Module`
 * can be posted to workers, where instantiating it takes ~1 ms.
 */
export function compileQuickJS(wasmFile: string = installedQuickJSWasm()): Promise<CompiledQuickJS> {
  let module = compiled.get(wasmFile);
  if (!module) {
    module = readFile(wasmFile).then(async (bytes) => ({
      module: await WebAssembly.compile(bytes),
      layout: memoryLayout(bytes),
    }));
    compiled.set(wasmFile, module);
  }
  return module;
}

/**
 * A fresh QuickJS instance over its own bounded linear memory. quickjs-emscripten 0.31's release
 * builds have no malloc_usable_size, so QuickJS counts every allocation as 8 bytes and
 * JS_SetMemoryLimit only stops single allocations larger than the limit: a linear memory with a
 * maximum is what actually bounds a script's heap.
 */
export async function loadModule(compiled: CompiledQuickJS, maxHeapBytes: number): Promise<LoadedModule> {
  const memory = new WebAssembly.Memory({
    initial: INITIAL_MEMORY_BYTES / PAGE_BYTES,
    maximum: Math.ceil((INITIAL_MEMORY_BYTES + maxHeapBytes + HOST_HEADROOM_BYTES) / PAGE_BYTES),
  });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmModule: compiled.module, wasmMemory: memory }),
  );
  return { module, memory, layout: compiled.layout, fresh: true };
}
