import { defineConfig } from "vitest/config";

export default defineConfig({
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
