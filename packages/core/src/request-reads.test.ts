import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const REPOSITORY = new URL("../../../", import.meta.url).pathname;

/** The hand-written sources of the packages and the functions, without tests and built output. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory())
      return ["node_modules", "dist", ".sst"].includes(entry.name) ? [] : sources(full);
    return /\.tsx?$/.test(entry.name) && !/\.test(-d)?\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/**
 * A request's read that may be left out: a parameter or field defaulted to a new read, an
 * optional one, or a fallback to a new one. Forgetting the request's read would then read the
 * generations again, silently — instead of failing to compile.
 */
const DEFAULTED_READ = [
  /\bCascadeRead\s*=/, // read: CascadeRead = CascadeRead.begin()
  /\?\s*:\s*CascadeRead\b/, // read?: CascadeRead
  /\bCascadeRead\s*\|\s*undefined\b/, // read: CascadeRead | undefined
  /(\?\?|\|\|)\s*CascadeRead\.begin\(\)/, // options.read ?? CascadeRead.begin()
];

/** The lines of `text` that let a request's read be left out. */
function defaultedReads(text: string): string[] {
  return text.split("\n").filter((line) => DEFAULTED_READ.some((pattern) => pattern.test(line)));
}

const files = [...sources(join(REPOSITORY, "packages")), ...sources(join(REPOSITORY, "functions"))];
const text = (file: string) => readFileSync(file, "utf8");
const name = (file: string) => relative(REPOSITORY, file);

describe("a request's read of the generations cannot be forgotten (issue 38)", () => {
  it("finds every spelling of a defaulted read (a scanner that finds nothing would pass)", () => {
    expect(
      defaultedReads(
        [
          "  async catalog(read: CascadeRead = CascadeRead.begin()): Promise<CompiledCatalog> {",
          "  readonly catalog: { catalog(read?: CascadeRead): Promise<CompiledCatalog> };",
          "    options: { readonly tenant?: string; readonly read?: CascadeRead } = {},",
          "    const read = options.read ?? CascadeRead.begin();",
          "  lookup(name: string, read: CascadeRead | undefined) {",
          "  async snapshot(tenant: string, project: string, read: CascadeRead): Promise<ToolSnapshot> {",
        ].join("\n"),
      ),
    ).toHaveLength(5);
  });

  it("no method, field or option of packages/ and functions/ defaults the request's read", () => {
    expect(files.length).toBeGreaterThan(200);
    const reads = files.filter((file) => /\bCascadeRead\b/.test(text(file)));
    // The scan reaches the places that take a read: the catalog of snapshots and the model catalog.
    expect(reads.map(name)).toEqual(
      expect.arrayContaining([
        "packages/core/src/tools/tool-catalog.ts",
        "packages/core/src/catalog/model-catalog-service.ts",
      ]),
    );
    const offenders = reads.flatMap((file) =>
      defaultedReads(text(file)).map((line) => `${name(file)}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  // Below the snapshot nothing takes a read: the surface, the dispatcher, the meta-tools, the
  // recipes and the tool types answer from the `ToolSnapshot` they are handed. Only the catalog
  // of snapshots takes the read the snapshot is made under, and the snapshot carries it on.
  it("below the snapshot no module names a read: it takes the request's ToolSnapshot", () => {
    const below = files.filter((file) =>
      /^packages\/core\/src\/(surface|dispatch|discovery|recipes|builtins|tool-types|sources|tools)\//.test(
        name(file),
      ),
    );
    expect(below.length).toBeGreaterThan(40);
    const snapshotOwners = [
      "packages/core/src/tools/tool-catalog.ts",
      "packages/core/src/tools/server-tool-service.ts",
      // Reads the record with the generations in one request: where a process turn's read begins.
      "packages/core/src/surface/process-records.ts",
    ];
    const offenders = below
      .filter((file) => !snapshotOwners.includes(name(file)))
      .filter((file) => /\bCascadeRead\b/.test(text(file)))
      .map(name);
    expect(offenders).toEqual([]);
  });

  // The model catalog's side of the same rule: a request's `CatalogSnapshot` (beside its tool
  // snapshot, `ToolSnapshot.catalog`, or begun by a catalog route) is what the budget, the model
  // picker, the learned limits and the catalog editor take; only the service that makes the
  // snapshot names a read.
  it("below the catalog snapshot no module names a read: the catalog modules take the request's CatalogSnapshot", () => {
    const catalogModules = files.filter((file) => /^packages\/core\/src\/catalog\//.test(name(file)));
    expect(catalogModules.map(name)).toEqual(
      expect.arrayContaining([
        "packages/core/src/catalog/tool-budget.ts",
        "packages/core/src/catalog/model-picker.ts",
        "packages/core/src/catalog/observed-tool-limits.ts",
        "packages/core/src/catalog/catalog-editor.ts",
      ]),
    );
    const offenders = catalogModules
      .filter((file) => name(file) !== "packages/core/src/catalog/model-catalog-service.ts")
      .filter((file) => /\bCascadeRead\b/.test(text(file)))
      .map(name);
    expect(offenders).toEqual([]);
    // Neither do the routes and pages of the functions: they begin a snapshot, never a read.
    const functions = files.filter((file) => name(file).startsWith("functions/"));
    expect(functions.filter((file) => /\bCascadeRead\b/.test(text(file))).map(name)).toEqual([]);
  });
});
