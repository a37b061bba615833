import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type LocalServer, startLocalServer } from "./support/local-server";

const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");
let server: LocalServer;
let dataDir: string;
let base: string;
let printedToken: string;
let printedCurl: string;

beforeAll(async () => {
  server = await startLocalServer();
  ({ dataDir, base, token: printedToken } = server);
  printedCurl = /curl -s -H "Authorization: Bearer \$TOKEN" (\S+)/.exec(server.banner)![1]!;
});

afterAll(async () => await server?.stop());

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the token script without blocking this process: a synchronous child would stall the
 * event loop past the server's keep-alive timeout, and the next fetch would reuse a closed socket.
 */
function token(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      ["functions/api/token.ts", ...args],
      { env: { ...process.env, ...env }, encoding: "utf8", timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe("the quick start (npm start, npm run token)", () => {
  it("serves the API and the printed token and curl work", async () => {
    expect((await fetch(`${base}/v1/health`)).status).toBe(200);
    const res = await fetch(printedCurl, { headers: { authorization: `Bearer ${printedToken}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tools: { name: string }[] };
    expect(body.tools.map((t) => t.name)).toContain("doc_getting_started");
  });

  it("the printed web listing link opens the project of the curl examples, not an empty Tenant field", async () => {
    const link = new URL(/Web listing .*: (\S+)/.exec(server.banner)![1]!);
    expect(link.pathname).toBe("/ui/tenants/demo/projects/hello");
    // What the page's script does with the fragment: trade the token for the session cookie.
    const session = await fetch(`${base}/ui/session`, {
      method: "POST",
      headers: { authorization: `Bearer ${link.hash.replace(/^#token=/, "")}` },
    });
    expect(session.status).toBe(204);
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const page = await fetch(`${base}${link.pathname}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Tools of demo / hello");
    expect(html).toContain("doc_getting_started");
    expect(html).not.toContain('name="tenant"');
  });

  it("mints tokens with the server's secret, and refuses unknown roles", async () => {
    const minted = await token(["--tenant", "acme", "--roles", "read"], {
      VANCE_DATA_DIR: dataDir,
      VANCE_JWT_SECRET: "",
    });
    expect(minted.status).toBe(0);
    const read = minted.stdout.trim();
    const ok = await fetch(`${base}/v1/tenants/acme/projects/p1/tools`, {
      headers: { authorization: `Bearer ${read}` },
    });
    expect(ok.status).toBe(200);
    const other = await fetch(`${base}/v1/tenants/globex/projects/p1/tools`, {
      headers: { authorization: `Bearer ${read}` },
    });
    expect(other.status).toBe(403);
    const refused = await token(["--tenant", "acme", "--roles", "root"], { VANCE_DATA_DIR: dataDir });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown roles: root/);
  });

  it("says which secret signed the token", async () => {
    const run = await token(["--tenant", "acme"], { VANCE_DATA_DIR: dataDir, VANCE_JWT_SECRET: "" });
    expect(run.status).toBe(0);
    expect(run.stderr.trim()).toBe(`signed with the secret in ${join(dataDir, "jwt-secret")}`);
    expect(run.stdout.trim().split(".")).toHaveLength(3);
  });

  it("never makes a secret of its own: a data dir the server has not started on is refused, naming it", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "vance-token-"));
    try {
      const run = await token(["--tenant", "acme"], { VANCE_DATA_DIR: elsewhere, VANCE_JWT_SECRET: "" });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`no JWT secret at ${join(elsewhere, "jwt-secret")}`);
      expect(run.stderr).toContain("VANCE_DATA_DIR=<dir> npm run token");
      expect(existsSync(join(elsewhere, "jwt-secret"))).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("has --help, and --data-dir finds the server's secret from any shell", async () => {
    const help = await token(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: npm run token -- --tenant <tenant|*>");
    const unknown = await token(["--tenat", "acme"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("usage: npm run token");
    const run = await token(["--tenant", "acme", "--data-dir", dataDir], {
      VANCE_DATA_DIR: "",
      VANCE_JWT_SECRET: "",
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(join(dataDir, "jwt-secret"));
  });

  it("prints the token command that finds this server's secret", () => {
    expect(server.banner).toContain(`VANCE_DATA_DIR=${dataDir} npm run token -- --tenant acme`);
  });
});

describe("npm start on a port in use", () => {
  it("says so in one line and exits 1, without a stack", async () => {
    const port = await freePort();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
    const dataDir = mkdtempSync(join(tmpdir(), "vance-port-"));
    try {
      const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        execFile(
          TSX,
          ["functions/api/node.ts"],
          {
            env: {
              ...process.env,
              PORT: String(port),
              VANCE_DATA_DIR: dataDir,
              VANCE_STORE_SCAN_SECONDS: "0",
            },
            timeout: 30_000,
          },
          (error, _stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stderr }),
        );
      });
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toBe(
        `cannot listen on 127.0.0.1:${port}: the port is in use (another npm start?); stop that server or start with PORT=<another port>`,
      );
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
