import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, startLocalServer } from "./support/local-server";

/** `npm run example:agent` against the local server as `npm start` runs it, with its own fake endpoint. */
describe("examples/agent", () => {
  let server: LocalServer;

  beforeAll(async () => {
    server = await startLocalServer({ env: { VANCE_STORE_SCAN_SECONDS: "0" } });
  });
  afterAll(async () => await server?.stop());

  async function example(...args: string[]) {
    // Without provider keys the example starts its own fake endpoint.
    const { OPENAI_API_KEY: _openai, ANTHROPIC_API_KEY: _anthropic, ...inherited } = process.env;
    const env = { ...inherited, VANCE_URL: server.base, VANCE_TOKEN: server.token, NO_COLOR: "1" };
    try {
      const { stdout } = await promisify(execFile)(
        "npm",
        ["run", "--silent", "example:agent", "--", ...args],
        {
          env,
          encoding: "utf8",
        },
      );
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: `${failed.stdout}${failed.stderr}` };
    }
  }

  it("runs the task over four turns, printing each turn's tool calls, and exits 0", async () => {
    const { code, stdout } = await example();
    expect(code, stdout).toBe(0);
    const turns = stdout.split(/^turn \d+:$/m).slice(1);
    expect(turns.map((turn) => [...turn.matchAll(/^ {2}(\w+)\(/gm)].map((call) => call[1]))).toEqual([
      ["tool_description"],
      ["add_numbers"],
      ["greet"],
      [],
    ]);
    expect(stdout).toContain('add_numbers({"a":17,"b":25}) → 42');
    expect(stdout).toContain("answer: 17 + 25 = 42, and I greeted Ada: Hello, Ada!");
    // The task over, the example ended its process: the service no longer has it.
    const processId = /; process (\S+) in /.exec(stdout)?.[1];
    expect(stdout).toContain(`process ${processId} ended`);
    const record = await fetch(`${server.base}/v1/tenants/demo/projects/example/processes/${processId}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(record.status).toBe(404);
  }, 60_000);

  it("exits 1 when the endpoint drops a call outside the tools array, naming the phantom it reported", async () => {
    const { code, stdout } = await example("--drop");
    expect(code, stdout).toBe(1);
    expect(stdout).toContain("empty answer reported: phantom — add_numbers (prompt)");
    expect(stdout).toContain("failed: the model's turn came back empty");
  }, 60_000);
});
