import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Builds the worker bundles the sandbox and the OpenAPI compiler load (both projects need them). */
const WORKER_BUNDLES = "test/setup/script-worker.ts";
/** Loads Ajv, RE2 and acorn, which the code loads lazily, for tests that use them directly. */
const LAZY_ENGINES = "test/setup/lazy-engines.ts";

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
    // Tests wait for states (a pack's status, a listing's content, a child's readiness), never for
    // a fixed time; these limits only end a hang. At load 10-25 on 2 cores (eight suites at once)
    // child processes (java, npm, Node 22, Chromium) took several times their idle start, and 20 s
    // ended tests that were progressing.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // `expect.poll` waits for a state; its default 1 s gave up while a loaded machine still moved.
    expect: { poll: { timeout: 30_000 } },
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: on a 2-core machine (CI's, this one's)
    // a single worker, so every file ran alone while most of them wait on child processes (java,
    // s3rver, the servers under test, npm, Node 22) or on deadlines. Two files at a time at least.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // `npm test` runs both projects; `npm run test:unit` only the first, which starts no server.
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "functions/**/*.test.ts"],
          // One module graph per worker thread, shared by the files it runs: each file used to
          // start a process and import (transform) core anew, most of the project's time. The
          // files keep no state between them beyond module caches they do not assert on; a global
          // one stubs is put back after its test.
          pool: "threads",
          isolate: false,
          unstubGlobals: true,
          globalSetup: [WORKER_BUNDLES],
          setupFiles: [LAZY_ENGINES],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          // The worker bundles, the CLI bundle, s3rver, DynamoDB Local and the MCP servers, side by side.
          globalSetup: ["test/setup/integration.ts"],
          setupFiles: [LAZY_ENGINES, "test/setup/close-apps.ts"],
        },
      },
    ],
  },
});
