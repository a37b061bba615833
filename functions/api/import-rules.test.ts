import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles } from "../../test/support/cycles";

const API = new URL(".", import.meta.url).pathname;
const PORTS = join(API, "../../packages/core/src/ports");
const ROUTES = join(API, "routes");

/** The store ports of `packages/core` (`StateStore`, `ObjectStore`, …), read from the port files. */
const STORE_PORTS = readdirSync(PORTS).flatMap((file) =>
  [...readFileSync(join(PORTS, file), "utf8").matchAll(/^export interface (\w+Store)\b/gm)].map(
    ([, name]) => name!,
  ),
);
const mentionsStore = new RegExp(`\\b(${STORE_PORTS.join("|")})\\b`);

const routeModules = readdirSync(ROUTES).filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"));

describe("routes touch no port: they parse, authorise and call a service", () => {
  it("finds the store ports and the route modules (an empty scan would pass every rule)", () => {
    expect(STORE_PORTS).toEqual(expect.arrayContaining(["ObjectStore", "SecretStore", "StateStore"]));
    expect(routeModules).toEqual(expect.arrayContaining(["insights.ts", "processes.ts"]));
  });

  it("no route module names a store port or imports an adapter", () => {
    const offenders = routeModules.filter((file) => {
      const source = readFileSync(join(ROUTES, file), "utf8");
      return mentionsStore.test(source) || /from\s+["']@vance\/adapters/.test(source);
    });
    expect(offenders).toEqual([]);
  });

  it("the services handed to the routes (`AppServices`) include no store", () => {
    const app = readFileSync(join(API, "app-services.ts"), "utf8");
    const services = /export interface AppServices \{([^}]*)\}/.exec(app)?.[1];
    expect(services).toContain("ProcessService");
    expect(services).not.toMatch(mentionsStore);
  });
});

/** `functions/`-relative module → the `functions/` modules it imports (type-only imports included). */
function functionsGraph(): Map<string, string[]> {
  const root = join(API, "..");
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
    });
  const modules = walk(root);
  const known = new Set(modules);
  const resolveIn = (from: string, specifier: string) => {
    const base = resolve(dirname(from), specifier);
    return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((candidate) => known.has(candidate));
  };
  return new Map(
    modules.map((module) => [
      relative(root, module),
      [...readFileSync(module, "utf8").matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.[^"']+)["']/g)]
        .map(([, specifier]) => resolveIn(module, specifier!))
        .filter((target): target is string => target !== undefined)
        .map((target) => relative(root, target)),
    ]),
  );
}

describe("functions/ has no import cycles", () => {
  const graph = functionsGraph();

  it("reads the graph (the app imports the listing's routes)", () => {
    expect(graph.get("api/app.ts")).toContain("api/ui/routes.tsx");
  });

  it("no module imports one that imports it back, however far round", () => {
    expect(importCycles(graph)).toEqual([]);
  });
});
