import { describe, expect, it } from "vitest";
import { Slots } from "./slots";

const wait = { wait: true, waitMs: 1_000 } as const;

describe("Slots", () => {
  it("grants up to the limit, queues up to maxQueued and refuses the rest at once", async () => {
    const slots = new Slots(2, 1);
    const a = await slots.acquire(wait);
    const b = await slots.acquire(wait);
    expect(typeof a).toBe("function");
    expect(typeof b).toBe("function");
    const queued = slots.acquire(wait);
    expect(await slots.acquire(wait)).toBe("busy");
    expect(slots.counts()).toEqual({ held: 2, queued: 1 });
    (a as () => void)();
    expect(typeof (await queued)).toBe("function");
    expect(slots.counts()).toEqual({ held: 2, queued: 0 });
  });

  it("never queues a caller that may not wait", async () => {
    const slots = new Slots(1, 10);
    await slots.acquire(wait);
    expect(await slots.acquire({ wait: false, waitMs: 1_000 })).toBe("busy");
  });

  it("answers busy when the wait is longer than asked for, and cancelled when the caller leaves", async () => {
    const slots = new Slots(1, 10);
    await slots.acquire(wait);
    expect(await slots.acquire({ wait: true, waitMs: 20 })).toBe("busy");
    const controller = new AbortController();
    const pending = slots.acquire({ wait: true, waitMs: 1_000, signal: controller.signal });
    controller.abort();
    expect(await pending).toBe("cancelled");
    expect(slots.counts()).toEqual({ held: 1, queued: 0 });
  });

  it("releases once, however often release is called", async () => {
    const slots = new Slots(1, 0);
    const release = (await slots.acquire(wait)) as () => void;
    release();
    release();
    expect(slots.counts()).toEqual({ held: 0, queued: 0 });
  });
});
