import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles } from "../../../test/support/cycles";

const ROOT = new URL(".", import.meta.url).pathname;
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g;
const RE_EXPORT = /^export\s[^;]*?\bfrom\s+["']([^"']+)["']/gm;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

/** The `src`-relative module a relative specifier in `module` names. */
function resolveModule(module: string, specifier: string): string {
  const base = resolve(ROOT, dirname(module), specifier);
  return relative(ROOT, existsSync(`${base}.ts`) ? `${base}.ts` : join(base, "index.ts"));
}

/** The relative specifiers of `module` that `pattern` captures. */
function specifiers(module: string, pattern: RegExp): string[] {
  return [...readFileSync(join(ROOT, module), "utf8").matchAll(pattern)]
    .map(([, specifier]) => specifier ?? "")
    .filter((specifier) => specifier.startsWith("."));
}

/** `src`-relative module → the modules it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const modules = sources(ROOT).map((file) => relative(ROOT, file));
  return new Map(
    modules.map((module) => [
      module,
      specifiers(module, SPECIFIER).map((specifier) => resolveModule(module, specifier)),
    ]),
  );
}

/** The package's public modules: what `index.ts` re-exports, following folder barrels. */
function publicModules(): Set<string> {
  const found = new Set<string>();
  const pending = ["index.ts"];
  while (pending.length > 0) {
    const module = pending.pop()!;
    for (const specifier of specifiers(module, RE_EXPORT)) {
      const target = resolveModule(module, specifier);
      if (!found.has(target)) pending.push(target);
      found.add(target);
    }
  }
  return found;
}

const folder = (module: string) => dirname(module);

/**
 * The layer a module belongs to: the first folder of its path under `src`; `.` for the root files
 * (`errors.ts`, `ids.ts`, …) and for `ids/`, the rules `ids.ts` re-exports one per file.
 */
const topFolder = (module: string) => {
  const first = module.split("/").slice(0, -1)[0] ?? ".";
  return first === "ids" ? "." : first;
};

/**
 * Top folder → the top folders its modules import (type-only imports included), without the
 * root files (a base layer every folder may import) and without `index.ts`, which imports all.
 */
function folderGraph(modules: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [module, targets] of modules) {
    if (module === "index.ts" || topFolder(module) === ".") continue;
    const from = topFolder(module);
    const imported = folders.get(from) ?? new Set<string>();
    for (const target of targets) {
      if (topFolder(target) !== from && topFolder(target) !== ".") imported.add(topFolder(target));
    }
    folders.set(from, imported);
  }
  return new Map([...folders].map(([name, imported]) => [name, [...imported].sort()]));
}

const graph = importGraph();

describe("packages/core import rules", () => {
  it("reads the import graph (a scanner that finds nothing would pass every rule)", () => {
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get("dispatch/tool-dispatcher.ts")).toContain("discovery/discovery-api.ts");
    expect(graph.get("processes/process-service.ts")).toContain("dispatch/tool-dispatcher.ts");
  });

  it("the meta-tools, the discovery API and the dispatcher import no ProcessService: nothing calls back into it", () => {
    const callees = [...graph].filter(([module]) => /^(builtins|discovery|dispatch)\//.test(module));
    expect(callees.length).toBeGreaterThan(5);
    const offenders = callees.filter(
      ([module, targets]) =>
        targets.includes("processes/process-service.ts") ||
        /\bProcessService\b/.test(readFileSync(join(ROOT, module), "utf8")),
    );
    expect(offenders.map(([module]) => module)).toEqual([]);
  });

  // A folder is one concept (processes/, surface/, usage/, …): its modules that the package's
  // index does not re-export are its internals, for its own modules only.
  it("a module imports another folder's modules only through the package's public exports, never its internals", () => {
    const exported = publicModules();
    expect(exported).toContain("processes/process-service.ts");
    const offenders = [...graph].flatMap(([module, targets]) =>
      targets
        .filter((target) => folder(target) !== folder(module) && !exported.has(target))
        .map((target) => `${module} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it("has no import cycles: a service never imports its caller back", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("the root files (errors.ts, ids.ts with ids/, json-schema.ts, …) are the base layer: they import no folder", () => {
    const root = [...graph].filter(([module]) => module !== "index.ts" && topFolder(module) === ".");
    expect(root.length).toBeGreaterThan(5);
    expect(root.map(([module]) => module)).toContain("ids/tool-name.ts");
    const offenders = root.flatMap(([module, targets]) =>
      targets.filter((target) => topFolder(target) !== ".").map((target) => `${module} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  // Folders are layers: calls/ (the call vocabulary) and ports/ at the bottom, tool-types/ above
  // config/ and net/, surface/ above tools/ and recipes/, processes/ on top of dispatch/.
  it("has no folder cycles: a folder never imports a folder that imports it back", () => {
    const folders = folderGraph(graph);
    expect(folders.get("processes")).toContain("dispatch");
    expect(folders.get("tool-types")).toContain("calls");
    expect(folders.get("calls")).toEqual(["ports"]);
    expect(importCycles(folders)).toEqual([]);
  });
});
