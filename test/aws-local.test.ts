import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");
const INSTANCES = 2;

/** Whether nothing listens on `port` of 127.0.0.1 now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** The first of `count` consecutive free ports (the stack's instances take consecutive ports). */
async function consecutiveFreePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * 30_000);
    let free = true;
    for (let port = first; port < first + count && free; port++) free = await portFree(port);
    if (free) return first;
  }
  throw new Error("no consecutive free ports");
}

interface Stack {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly token: string;
  stop(): Promise<number | null>;
}

/** `npm run start:aws-local` (its script; the worker bundles are the suite's), waited until every instance listens. */
async function startStack(dataDir: string, port: number): Promise<Stack> {
  const child = spawn(TSX, ["scripts/aws-local.ts"], {
    env: { ...process.env, VANCE_DATA_DIR: dataDir, PORT: String(port), INSTANCES: String(INSTANCES) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return await exited;
  };
  const listening = () => (out.match(/\] Vance Server Tools listening on/g) ?? []).length;
  try {
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (listening() === INSTANCES && /export TOKEN=\S+/.test(out)) resolve();
      };
      child.stdout?.on("data", check);
      child.once("exit", (code) => reject(new Error(`the stack exited with ${code}:\n${out}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, output: () => out, token: /export TOKEN=(\S+)/.exec(out)![1]!, stop };
}

const dataDir = mkdtempSync(join(tmpdir(), "vance-aws-local-"));
let running: Stack | undefined;

afterAll(async () => {
  await running?.stop();
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("npm run start:aws-local (s3rver, DynamoDB Local and several instances in one command)", () => {
  it("serves one truth from every instance, and a restart keeps the documents and the processes", async () => {
    const port = await consecutiveFreePorts(INSTANCES);
    const base = (instance: number) => `http://127.0.0.1:${port + instance}/v1/tenants/demo/projects/hello`;
    running = await startStack(dataDir, port);
    const headers = { authorization: `Bearer ${running.token}` };
    // The environment each instance gets is printed, for running an instance by hand.
    expect(running.output()).toContain("VANCE_STORE=s3");
    expect(running.output()).toContain("VANCE_STATE=dynamodb");

    const put = await fetch(`${base(0)}/tools/add_numbers`, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/yaml" },
      body: "type: scripted\ndescription: Add two numbers.\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
    });
    expect(put.status).toBe(201);
    const invoked = await fetch(`${base(1)}/tools/add_numbers/invoke`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ params: { a: 1, b: 2 } }),
    });
    expect(await invoked.json()).toMatchObject({ value: 3 });
    const spawned = await fetch(`${base(1)}/processes`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ allowedToolsAdd: ["add_numbers"], models: ["openai/gpt-4.1"] }),
    });
    expect(spawned.status).toBe(201);
    const { processId } = (await spawned.json()) as { processId: string };

    // Ctrl-C's signal: the instances stop first, then the two servers; the data dir stays.
    expect(await running.stop()).toBe(143);
    running = await startStack(dataDir, port);
    const after = { authorization: `Bearer ${running.token}` };
    // The same secret (kept in the data dir) signs the new banner's token and the old one.
    const tool = await fetch(`${base(1)}/tools/add_numbers`, { headers });
    expect(tool.status).toBe(200);
    const manifest = await fetch(`${base(0)}/processes/${processId}/manifest`, { headers: after });
    expect(manifest.status).toBe(200);
    expect(JSON.stringify(await manifest.json())).toContain("add_numbers");
    // Two starts of java and of two instances each: child processes, slow on a loaded machine.
  }, 240_000);
});
