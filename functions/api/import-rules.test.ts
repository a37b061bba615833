import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

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
    const app = readFileSync(join(API, "app.ts"), "utf8");
    const services = /export interface AppServices \{([^}]*)\}/.exec(app)?.[1];
    expect(services).toContain("ProcessService");
    expect(services).not.toMatch(mentionsStore);
  });
});
