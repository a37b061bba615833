import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");
let child: ChildProcess;
let dataDir: string;
let base: string;
let printedToken: string;
let printedCurl: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vance-start-"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const { VANCE_JWT_SECRET: _unset, ...env } = process.env;
  child = spawn(TSX, ["functions/api/node.ts"], {
    env: { ...env, PORT: String(port), VANCE_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start-up banner:\n${out}`)), 20_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (/curl -s .*doc_getting_started/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${out}`)));
  });
  printedToken = /export TOKEN=(\S+)/.exec(out)![1]!;
  printedCurl = /curl -s -H "Authorization: Bearer \$TOKEN" (\S+)/.exec(out)![1]!;
}, 30_000);

afterAll(() => {
  if (child.pid) process.kill(child.pid, "SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the quick start (npm start, npm run token)", () => {
  it("serves the API and the printed token and curl work", async () => {
    expect((await fetch(`${base}/v1/health`)).status).toBe(200);
    const res = await fetch(printedCurl, { headers: { authorization: `Bearer ${printedToken}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tools: { name: string }[] };
    expect(body.tools.map((t) => t.name)).toContain("doc_getting_started");
  });

  it("mints tokens with the server's secret, and refuses unknown roles", async () => {
    const token = execFileSync(TSX, ["functions/api/token.ts", "--tenant", "acme", "--roles", "read"], {
      env: { ...process.env, VANCE_DATA_DIR: dataDir, VANCE_JWT_SECRET: "" },
      encoding: "utf8",
    }).trim();
    const ok = await fetch(`${base}/v1/tenants/acme/projects/p1/tools`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(ok.status).toBe(200);
    const other = await fetch(`${base}/v1/tenants/globex/projects/p1/tools`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(other.status).toBe(403);
    expect(() =>
      execFileSync(TSX, ["functions/api/token.ts", "--tenant", "acme", "--roles", "root"], {
        env: { ...process.env, VANCE_DATA_DIR: dataDir },
        stdio: "pipe",
      }),
    ).toThrow(/unknown roles: root/);
  });
});
