import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AsyncLineSink } from "./log-sink";

describe("AsyncLineSink: log lines written off the serving thread", () => {
  let dir: string;
  let file: string;
  let fd: number;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "vance-log-sink-"));
    file = join(dir, "out.log");
    fd = openSync(file, "w");
  });

  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes every line, whole and in order, once settled", async () => {
    const sink = new AsyncLineSink(fd);
    const lines = Array.from({ length: 3_000 }, (_, i) => JSON.stringify({ event: "http.request", i }));
    for (const line of lines.slice(0, 1_000)) sink.write(line);
    // Nothing is written on the caller's turn.
    expect(readFileSync(file, "utf8")).toBe("");
    await new Promise((resolve) => setImmediate(resolve));
    for (const line of lines.slice(1_000)) sink.write(line);
    await sink.settled(10_000);
    expect(readFileSync(file, "utf8")).toBe(`${lines.join("\n")}\n`);
  });

  it("holds a few lines for others to share their write; a pipe's piece, or settling, sends them at once", async () => {
    const hour = 3_600_000;
    const sink = new AsyncLineSink(fd, 4 * 1024 * 1024, hour);
    sink.write("first");
    sink.write("second");
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(readFileSync(file, "utf8")).toBe("");
    await sink.settled(hour);
    expect(readFileSync(file, "utf8")).toBe("first\nsecond\n");

    const long = "x".repeat(2_100);
    sink.write(long);
    sink.write(long);
    // A piece's worth waits for nothing: the first line goes (a piece holds one of them); the rest lingers.
    await vi.waitFor(() => expect(readFileSync(file, "utf8")).toBe(`first\nsecond\n${long}\n`), {
      timeout: 10_000,
    });
    await sink.settled(hour);
    expect(readFileSync(file, "utf8")).toBe(`first\nsecond\n${long}\n${long}\n`);
  });

  it("drops lines past its pending bytes and says how many once it caught up", async () => {
    const sink = new AsyncLineSink(fd, 100);
    for (let i = 0; i < 50; i++) sink.write(`line ${String(i).padStart(3, "0")}`);
    await sink.settled(10_000);
    // Lines of 8 characters are 9 bytes with their newline: 12 are queued before the pending
    // bytes reach 100, and the other 38 are counted.
    const written = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(written).toEqual([
      ...Array.from({ length: 12 }, (_, i) => `line ${String(i).padStart(3, "0")}`),
      JSON.stringify({ level: "WARN", event: "log.dropped", lines: 38 }),
    ]);
  });
});
