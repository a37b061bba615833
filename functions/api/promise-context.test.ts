import { setTimeout as sleep } from "node:timers/promises";
import { createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { afterEach, describe, expect, it } from "vitest";
import { asyncContextFrameOn, PromiseContextManager } from "./promise-context";

const KEY = createContextKey("request");
const named = (name: string) => ROOT_CONTEXT.setValue(KEY, name);
const nameOf = (manager: PromiseContextManager) => manager.active().getValue(KEY);

let manager: PromiseContextManager;
afterEach(() => {
  manager?.disable();
});

describe("PromiseContextManager", () => {
  it("keeps the context across awaits, then callbacks and nested withs, and restores the outer one", async () => {
    manager = new PromiseContextManager().enable();
    const seen: unknown[] = [];
    const work = async () => {
      seen.push(nameOf(manager));
      await sleep(1);
      seen.push(nameOf(manager));
      await manager.with(named("inner"), async () => {
        await Promise.resolve();
        seen.push(nameOf(manager));
      });
      seen.push(nameOf(manager));
      return Promise.resolve().then(() => nameOf(manager));
    };
    const last = await manager.with(named("outer"), work);
    expect([...seen, last]).toEqual(["outer", "outer", "inner", "outer", "outer"]);
    expect(nameOf(manager)).toBeUndefined();
  });

  it("keeps interleaved requests apart", async () => {
    manager = new PromiseContextManager().enable();
    const request = async (delays: number[]) => {
      const seen: unknown[] = [];
      for (const ms of delays) {
        await sleep(ms);
        seen.push(nameOf(manager));
      }
      return seen;
    };
    const answers = await Promise.all(
      ["a", "b", "c"].map((name, i) =>
        manager.with(named(name), () => request([3 - i, i, 2, 0, 1].map((ms) => ms % 3))),
      ),
    );
    expect(answers).toEqual([Array(5).fill("a"), Array(5).fill("b"), Array(5).fill("c")]);
  });

  it("runs a bound function in its context from any callback, and takes no context into a timer unbound", async () => {
    manager = new PromiseContextManager().enable();
    const seen = await manager.with(named("bound"), async () => {
      const bound = manager.bind(manager.active(), () => nameOf(manager));
      return new Promise<unknown[]>((resolve) => {
        setTimeout(() => resolve([bound(), nameOf(manager)]), 1);
      });
    });
    expect(seen).toEqual(["bound", undefined]);
  });

  it("once disabled, follows nothing", async () => {
    manager = new PromiseContextManager().enable().disable();
    const after = await manager.with(named("x"), async () => {
      await sleep(1);
      return nameOf(manager);
    });
    expect(after).toBeUndefined();
  });
});

describe("asyncContextFrameOn", () => {
  it("is on from Node 24 unless turned off, on Node 22 with the flag only, never on Node 20", () => {
    expect(asyncContextFrameOn("24.1.0", [])).toBe(true);
    expect(asyncContextFrameOn("24.1.0", ["--no-async-context-frame"])).toBe(false);
    expect(asyncContextFrameOn("22.23.5", [])).toBe(false);
    expect(asyncContextFrameOn("22.23.5", ["--experimental-async-context-frame"])).toBe(true);
    expect(asyncContextFrameOn("20.20.2", ["--experimental-async-context-frame"])).toBe(false);
  });
});
