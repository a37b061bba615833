import { readdirSync, readFileSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("..", import.meta.url).pathname;

interface Manifest {
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as Manifest;

/** Source files under `dir` (no tests: those may use the root's devDependencies). */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist") return [];
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The packages a file imports by bare name (`yaml`, `@aws-sdk/client-s3`), statically or lazily. */
function importedPackages(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']/gms),
    ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map(([, specifier]) => specifier!);
  return specifiers
    .filter((s) => !s.startsWith(".") && !s.startsWith("node:") && !builtinModules.includes(s))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

/**
 * Each shipped folder and the manifest that must declare what it imports. The functions are
 * bundled from the root (so its devDependencies and the workspace packages count); a published
 * package declares its own.
 */
const WORKSPACE = readdirSync(join(ROOT, "packages")).map((name) => `@vance/${name}`);
const UNITS = [
  { dir: "functions", manifest: ".", bundled: true },
  ...readdirSync(join(ROOT, "packages")).map((name) => ({
    dir: `packages/${name}/src`,
    manifest: `packages/${name}`,
    bundled: false,
  })),
];

describe("every package a shipped module imports is declared where it is imported", () => {
  it.each(UNITS)("$dir", ({ dir, manifest: at, bundled }) => {
    const declared = manifest(at);
    const known = new Set([
      ...Object.keys(declared.dependencies ?? {}),
      ...Object.keys(declared.peerDependencies ?? {}),
      ...(bundled ? [...Object.keys(declared.devDependencies ?? {}), ...WORKSPACE] : []),
    ]);
    const files = sources(dir);
    expect(files.length).toBeGreaterThan(0);
    const undeclared = files.flatMap((file) =>
      importedPackages(file)
        .filter((name) => !known.has(name))
        .map((name) => `${relative(ROOT, join(ROOT, file))} imports ${name}`),
    );
    expect(undeclared).toEqual([]);
  });

  it("sees the imports it checks (functions/ imports valibot and hono)", () => {
    const names = new Set(sources("functions").flatMap(importedPackages));
    expect(names).toContain("valibot");
    expect(names).toContain("hono");
  });
});
