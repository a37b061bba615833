import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL(".", import.meta.url).pathname;
const FORBIDDEN =
  /from\s+["'](node:[^"']+|@aws-sdk\/[^"']+|hono(\/[^"']*)?|fs|path|os|crypto|child_process|http|https|net)["']/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

describe("packages/core stays pure", () => {
  it("imports no AWS SDK, no Hono and no node built-ins outside tests", () => {
    const files = sources(ROOT);
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.filter((file) => FORBIDDEN.test(readFileSync(file, "utf8")));
    expect(offenders).toEqual([]);
  });
});
