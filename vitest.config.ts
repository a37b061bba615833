import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  // The published packages export their built `dist/`; inside the repository every tool reads
  // their sources (tsconfig `paths` for tsc and tsx, these aliases for vitest), so no build precedes a test.
  resolve: {
    alias: [
      { find: /^@vance\/client$/, replacement: source("./packages/client/src/index.ts") },
      { find: /^@vance\/engine$/, replacement: source("./packages/engine/src/index.ts") },
      { find: /^@vance\/engine\/(.+)$/, replacement: source("./packages/engine/src/$1.ts") },
    ],
  },
  test: {
    include: ["packages/*/src/**/*.test.ts", "functions/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: [
      "test/setup/script-worker.ts",
      "test/setup/cli.ts",
      "test/setup/s3rver.ts",
      "test/setup/dynamodb.ts",
      "test/setup/mcp-servers.ts",
    ],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
