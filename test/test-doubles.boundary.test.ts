import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import * as adapters from "@vance/adapters";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const TESTING_ENTRY = join(ROOT, "packages/adapters/src/testing.ts");
/** The test doubles, as module paths without extension. */
const DOUBLES = ["memory", "counting"].map((name) => join(ROOT, "packages/adapters/src/object-store", name));
const IMPORT = /(?:from|import)\s*\(?\s*["']([^"']+)["']/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

/** Production sources: everything under functions/ and packages/*\/src but tests, the doubles and their entry. */
function productionSources(): string[] {
  const packages = readdirSync(join(ROOT, "packages")).map((name) => join(ROOT, "packages", name, "src"));
  return [join(ROOT, "functions"), ...packages]
    .flatMap((dir) => sources(dir))
    .filter((file) => file !== TESTING_ENTRY && !DOUBLES.includes(file.replace(/\.ts$/, "")));
}

function importsOfDoubles(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)]
    .map((match) => match[1]!)
    .filter(
      (specifier) =>
        specifier === "@vance/adapters/testing" ||
        (specifier.startsWith(".") &&
          DOUBLES.includes(resolve(dirname(file), specifier).replace(/\.ts$/, ""))),
    );
}

describe("test doubles stay out of production code", () => {
  it("no source under functions/ or packages/*/src imports @vance/adapters/testing or a double", () => {
    const files = productionSources();
    expect(files.length).toBeGreaterThan(50);
    const offenders = files.flatMap((file) =>
      importsOfDoubles(file).map((specifier) => `${relative(ROOT, file)} → ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it("the production entry of @vance/adapters exports no double", () => {
    expect(Object.keys(adapters)).not.toContain("MemoryObjectStore");
    expect(Object.keys(adapters)).not.toContain("CountingObjectStore");
    expect(Object.keys(adapters)).toContain("FsObjectStore");
  });

  it("the check sees an import of the doubles where there is one", () => {
    expect(importsOfDoubles(TESTING_ENTRY)).toEqual(["./object-store/counting", "./object-store/memory"]);
  });
});
