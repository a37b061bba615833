import { linkSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { FsObjectStore } from "@vance/adapters";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import {
  builtInToolTypes,
  DocumentCascade,
  Generations,
  MAX_YAML_DOCUMENT_CHARS,
  MIB,
  ServerToolService,
  ToolTypeRegistry,
} from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Issue 11: the caches are bounded by bytes. 5,000 distinct documents of 200 KiB (1 GB in all)
 * are read through a warm instance; the caches' own accounting and the heap stay under the bound.
 * The documents are hard links of one file, so the disk holds 200 KiB, yet every read yields
 * a string of its own.
 */

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const DOCUMENTS = 5_000;
const DOCUMENT_CHARS = 200 * 1024;
/** Tool documents are YAML the serving thread parses: they stay under `MAX_YAML_DOCUMENT_CHARS`. */
const TOOL_DOCUMENT_CHARS = MAX_YAML_DOCUMENT_CHARS - 1024;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A store of `count` documents of `body` under `acme/shop/{dir}/{name(i)}`. */
async function linkedStore(dir: string, name: (i: number) => string, body: string, count: number) {
  const root = mkdtempSync(join(tmpdir(), "vance-memory-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const store = new FsObjectStore(root);
  const first = `acme/shop/${dir}/${name(0)}`;
  await store.put(first, body);
  mkdirSync(join(root, "acme/shop", dir), { recursive: true });
  for (let i = 1; i < count; i++) linkSync(join(root, first), join(root, "acme/shop", dir, name(i)));
  const state = new SqliteStateStore(":memory:");
  cleanups.push(() => state.close());
  return { store, generations: new Generations({ state }) };
}

function heapUsed(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

describe("caches bounded by bytes", () => {
  it("reading 5,000 distinct 200 KiB documents keeps the document cache under its bound, in its accounting and on the heap", async () => {
    const maxBytes = 16 * MIB;
    const { store, generations } = await linkedStore(
      "documents",
      (i) => `doc-${i}.md`,
      `# big\n${"x".repeat(DOCUMENT_CHARS - 6)}`,
      DOCUMENTS,
    );
    const cascade = new DocumentCascade(store, new Map(), { generations, maxCacheBytes: maxBytes });
    const before = heapUsed();
    let peak = 0;
    for (let i = 0; i < DOCUMENTS; i++) {
      const hit = await cascade.lookup("acme", "shop", `documents/doc-${i}.md`);
      expect(hit?.body.length).toBe(DOCUMENT_CHARS);
      peak = Math.max(peak, cascade.stats.bytes);
    }
    const grown = heapUsed() - before;
    console.info(
      `document cache: peak ${(peak / MIB).toFixed(1)} MiB accounted, ${cascade.stats.entries} entries, heap +${(grown / MIB).toFixed(1)} MiB (bound ${maxBytes / MIB} MiB)`,
    );
    expect(peak).toBeLessThanOrEqual(maxBytes);
    expect(cascade.stats.misses).toBeGreaterThanOrEqual(DOCUMENTS);
    expect(grown).toBeLessThan(maxBytes);

    // The most recent documents are still warm: a second read costs no request.
    const hits = cascade.stats.hits;
    await cascade.lookup("acme", "shop", `documents/doc-${DOCUMENTS - 1}.md`);
    expect(cascade.stats.hits).toBe(hits + 2);
  });

  it("parsing 1,000 distinct 31 KiB tool documents (four times the bound) keeps the parsed cache under its bound, in its accounting and on the heap", async () => {
    const count = 1_000;
    const maxBytes = 8 * MIB;
    const description = "y".repeat(TOOL_DOCUMENT_CHARS);
    const { store, generations } = await linkedStore(
      "server-tools",
      (i) => `big_tool_${i}.yaml`,
      `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/x.md\n`,
      count,
    );
    // The documents' own cache is kept small, so the heap shows the parsed cache.
    const cascade = new DocumentCascade(store, new Map(), { generations, maxCacheBytes: MIB });
    const tools = new ServerToolService(cascade, new ToolTypeRegistry(builtInToolTypes()), [], undefined, {
      maxCacheBytes: maxBytes,
    });
    const before = heapUsed();
    let peak = 0;
    // One snapshot for all the lookups: the generations are read once.
    const snapshot = await tools.snapshot("acme", "shop");
    for (let i = 0; i < count; i++) {
      const found = await snapshot.lookup(`big_tool_${i}`);
      expect(found.status === "found" && found.tool.config.description.length).toBe(TOOL_DOCUMENT_CHARS);
      peak = Math.max(peak, tools.stats.bytes);
    }
    const grown = heapUsed() - before;
    console.info(
      `parsed cache: peak ${(peak / MIB).toFixed(1)} MiB accounted, ${tools.stats.entries} entries, heap +${(grown / MIB).toFixed(1)} MiB (bound ${maxBytes / MIB} MiB + 1 MiB of documents)`,
    );
    expect(peak).toBeLessThanOrEqual(maxBytes);
    expect(grown).toBeLessThan(maxBytes + MIB);
  });
});
