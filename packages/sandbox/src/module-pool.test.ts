import type { QuickJSAsyncWASMModule } from "quickjs-emscripten";
import { describe, expect, it } from "vitest";
import { AsyncifyModulePool, type LoadedModule } from "./module-pool";

function fakeLoader() {
  let count = 0;
  return () => {
    count += 1;
    const memory = new WebAssembly.Memory({ initial: 1 });
    return Promise.resolve({ module: { id: count } as unknown as QuickJSAsyncWASMModule, memory });
  };
}

describe("AsyncifyModulePool", () => {
  it("creates a module per concurrent acquire instead of waiting for one to come back", async () => {
    const pool = new AsyncifyModulePool(2, fakeLoader());
    const held = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    expect(new Set(held.map((loaded) => loaded.module)).size).toBe(3);
    expect(pool.stats()).toMatchObject({ inUse: 3, peakInUse: 3, created: 3, idle: 0 });
  });

  it("keeps at most maxIdle released modules and reuses them", async () => {
    const pool = new AsyncifyModulePool(2, fakeLoader());
    const held: LoadedModule<QuickJSAsyncWASMModule>[] = await Promise.all([
      pool.acquire(),
      pool.acquire(),
      pool.acquire(),
    ]);
    for (const loaded of held) pool.release(loaded);
    expect(pool.stats()).toMatchObject({ inUse: 0, idle: 2 });
    const again = await pool.acquire();
    expect(held).toContain(again);
    expect(pool.stats().created).toBe(3);
  });

  it("forgets discarded modules", async () => {
    const pool = new AsyncifyModulePool(2, fakeLoader());
    await pool.acquire();
    pool.discard();
    expect(pool.stats()).toMatchObject({ inUse: 0, idle: 0 });
    await pool.acquire();
    expect(pool.stats().created).toBe(2);
  });

  it("does not count a module whose load failed", async () => {
    const pool = new AsyncifyModulePool(2, () => Promise.reject(new Error("no wasm")));
    await expect(pool.acquire()).rejects.toThrow("no wasm");
    expect(pool.stats()).toMatchObject({ inUse: 0, created: 0 });
  });
});
