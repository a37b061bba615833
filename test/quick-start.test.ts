import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, startLocalServer } from "./support/local-server";

const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");
let server: LocalServer;
let dataDir: string;
let base: string;
let printedToken: string;
let printedCurl: string;

beforeAll(async () => {
  server = await startLocalServer({ timeoutMs: 20_000 });
  ({ dataDir, base, token: printedToken } = server);
  printedCurl = /curl -s -H "Authorization: Bearer \$TOKEN" (\S+)/.exec(server.banner)![1]!;
}, 30_000);

afterAll(() => server?.stop());

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
