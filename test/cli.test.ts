import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@vance/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { listen, token } from "./support/ui-project";

/** The bin `npm install` links: run as a user runs it, in a process of its own. */
const BIN = join(process.cwd(), "node_modules", ".bin", "vance-tools");

let server: Awaited<ReturnType<typeof listen>>;
let env: Record<string, string>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against the test server (asynchronously: the server answers from this process). */
function run(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(BIN, args, { env: { ...env, ...extraEnv }, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The same program in this process (`runCli`): for the commands whose wiring the bin runs above
 * have shown, at a fraction of a process start each.
 */
async function runHere(args: string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(
    ["node", "vance-tools", ...args],
    {
      out: { write: (text: string) => (stdout += text) },
      err: { write: (text: string) => (stderr += text) },
    },
    { ...env, ...extraEnv },
  );
  return { code, stdout, stderr };
}

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "vance-cli-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const doc = (description: string, extra = "") =>
  `type: doc_lookup\ndescription: ${description}\n${extra}parameters: { path: documents/getting_started.md }\n`;

/** Ten documents of a configuration repository: nine tools and an MCP server connection. */
const TEN = {
  ...Object.fromEntries(
    Array.from({ length: 9 }, (_, i) => [
      `server-tools/cli_tool_${i}.yaml`,
      doc(`CLI tool ${i}`, "labels: [cli]\n"),
    ]),
  ),
  "mcp-servers/issues.yaml":
    "url: https://mcp.example.com/mcp\nheaders:\n  Authorization: Bearer ${secret:ISSUES_TOKEN}\n",
};

beforeAll(async () => {
  const { app } = await testApp();
  server = await listen(app);
  const { VANCE_URL: _u, VANCE_TOKEN: _t, VANCE_TENANT: _a, VANCE_PROJECT: _p, ...rest } = process.env;
  env = {
    ...(rest as Record<string, string>),
    NO_COLOR: "1",
    VANCE_URL: server.base,
    VANCE_TOKEN: await token("acme", ["read", "write", "admin"]),
    VANCE_TENANT: "acme",
    VANCE_PROJECT: "cli",
  };
}, 30_000);

afterAll(async () => {
  await server?.close();
});

describe("vance-tools lint (offline, the service's own parsers)", () => {
  it("prints one file:line error per broken document and exits 1", async () => {
    const dir = folder({
      "server-tools/good.yaml": doc("Fine"),
      "server-tools/teleport.yaml": "description: Beams things\ntype: teleport\n",
      "server-tools/renamed.yaml":
        "type: doc_lookup\ndescription: d\nname: other_name\nparameters: { path: a.md }\n",
      "mcp-servers/broken.yaml": "url: https://mcp.example.com/mcp\nheaders: [unclosed\n",
    });
    const { code, stdout, stderr } = await run(["lint", dir]);
    expect(code).toBe(1);
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^${dir}/server-tools/renamed\\.yaml:3: name: must equal 'renamed' \\[name_mismatch\\]$`),
      ),
      expect.stringMatching(
        new RegExp(
          `^${dir}/server-tools/teleport\\.yaml:2: type: must be one of .*scripted.* \\[unknown_type\\]$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(`^${dir}/mcp-servers/broken\\.yaml:[23]: .* \\[validation_failed\\]$`),
      ),
    ]);
    expect(stderr).toContain("3 problem(s) in 4 documents");
  });

  it("checks type parameters, name rules and the network policy, with the line of the field", async () => {
    const dir = folder({
      "server-tools/Caps.yaml": doc("Bad file name"),
      "server-tools/internal.yaml":
        "type: rest\ndescription: d\nparameters:\n  method: GET\n  url: http://10.0.0.1/x\n",
      "server-tools/slow.yaml":
        "type: scripted\ndescription: d\nparameters:\n  inputs: []\n  source: '1'\n  timeoutMs: -5\n",
    });
    const { code, stdout } = await runHere(["--json", "lint", dir]);
    expect(code).toBe(1);
    const { problems } = JSON.parse(stdout) as { problems: { file: string; line: number; code: string }[] };
    const at = (file: string) => problems.filter((p) => p.file.endsWith(file)).map((p) => [p.line, p.code]);
    expect(at("Caps.yaml")).toContainEqual([1, "invalid_id"]);
    expect(at("internal.yaml")).toEqual([[5, "validation_failed"]]);
    expect(at("slow.yaml")).toEqual([[6, "validation_failed"]]);
  });

  it("exits 0 on a good folder", async () => {
    const { code, stdout, stderr } = await run(["lint", folder(TEN)]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "" });
    expect(stderr).toContain("10 documents valid");
  });
});

describe("vance-tools schema and types", () => {
  it("prints a draft-07 JSON Schema with one if/then per type, and lists the types", async () => {
    const schema = JSON.parse((await runHere(["schema"])).stdout);
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
    expect(schema.required).toEqual(["type", "description"]);
    const types = JSON.parse((await runHere(["--json", "types"])).stdout).types.map(
      (t: { typeId: string }) => t.typeId,
    );
    expect(
      schema.allOf.map(
        (rule: { if: { properties: { type: { const: string } } } }) => rule.if.properties.type.const,
      ),
    ).toEqual(types);
    expect(types).toEqual(
      expect.arrayContaining(["scripted", "rest", "doc_lookup", "mcp_server", "openapi"]),
    );
    const server = JSON.parse((await runHere(["schema", "mcp-server"])).stdout);
    expect(server.required).toEqual(["url"]);
  });
});

describe("vance-tools against the running server", () => {
  it("push then list round-trips ten documents; a second push reports them unchanged", async () => {
    const dir = folder({ ...TEN, "README.md": "not a document: files at the top are left out\n" });
    const first = await run(["push", dir]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim().split("\n").at(-1)).toBe("created 10, replaced 0, unchanged 0, failed 0");

    const list = await run(["list", "--label", "cli"]);
    const rows = list.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^NAME\s+LAYER\s+TYPE\s+LABELS\s+PRIMARY\s+PACK\s+UPDATED$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(0, 5))).toEqual(
      Array.from({ length: 9 }, (_, i) => [`cli_tool_${i}`, "project", "doc_lookup", "cli", "no"]),
    );
    // When each was written (the token has no subject, so no author follows the time).
    for (const row of rows.slice(1)) expect(row).toMatch(/\s\d{4}-\d\d-\d\d \d\d:\d\d$/);
    const listed = JSON.parse((await runHere(["--json", "list"])).stdout) as {
      tools: { name: string; layer: string }[];
    };
    expect(listed.tools.filter((tool) => tool.name.startsWith("cli_tool_"))).toHaveLength(9);

    const pulled = mkdtempSync(join(tmpdir(), "vance-pull-"));
    expect((await runHere(["pull", pulled])).code).toBe(0);
    for (const [path, text] of Object.entries(TEN))
      expect(readFileSync(join(pulled, path), "utf8")).toBe(text);

    const second = await run(["--json", "push", dir]);
    expect(second.code).toBe(0);
    const summary = JSON.parse(second.stdout);
    expect(summary.unchanged).toHaveLength(10);
    expect([summary.created, summary.replaced, summary.failed]).toEqual([[], [], []]);
  });

  it("push replaces what changed, reports server refusals with their lines, and stops at the first conflict unless --force", async () => {
    const dir = folder({
      "documents/notes": "a document where another layer document has a folder\n",
      "server-tools/cli_tool_0.yaml": doc("CLI tool 0, changed", "labels: [cli]\n"),
      "server-tools/zz_bad.yaml": "type: doc_lookup\ndescription: d\nparameters:\n  nope: 1\n",
    });
    const other = folder({ "documents/notes/today.md": "# Today\n" });
    expect((await runHere(["push", other])).code).toBe(0);

    const stopped = JSON.parse((await runHere(["--json", "push", dir])).stdout);
    expect(stopped.stopped).toMatchObject({ path: "documents/notes", code: "path_conflict" });
    expect(stopped.notSent).toEqual(["server-tools/cli_tool_0.yaml", "server-tools/zz_bad.yaml"]);

    const forced = await run(["push", "--force", dir]);
    expect(forced.code).toBe(1);
    expect(forced.stdout).toContain("failed documents/notes");
    expect(forced.stdout).toMatch(/server-tools\/zz_bad\.yaml:4: parameters\.nope: /);
    expect(forced.stdout.trim().split("\n").at(-1)).toBe("created 0, replaced 1, unchanged 0, failed 2");
  });

  it("push and pull read the layer alone (GET T/documents): not the cascade's other layers", async () => {
    const headers = { authorization: `Bearer ${env.VANCE_TOKEN}` };
    const put = await fetch(
      `${server.base}/v1/tenants/acme/projects/_tenant/documents/server-tools/tenant_only.yaml`,
      {
        method: "PUT",
        headers: { ...headers, "content-type": "application/yaml" },
        body: doc("Tenant-wide"),
      },
    );
    expect(put.status).toBe(201);
    const project = await fetch(
      `${server.base}/v1/tenants/acme/projects/cli/documents?prefix=server-tools/`,
      { headers },
    );
    const listing = (await project.json()) as { layer: string; documents: { path: string; etag: string }[] };
    expect(listing.layer).toBe("project");
    expect(listing.documents.map((d) => d.path)).not.toContain("server-tools/tenant_only.yaml");
    expect(listing.documents.every((d) => d.path.startsWith("server-tools/") && d.etag.length > 0)).toBe(
      true,
    );
    const tenant = await runHere([
      "--json",
      "--project",
      "_tenant",
      "pull",
      mkdtempSync(join(tmpdir(), "vance-pull-")),
    ]);
    expect(JSON.parse(tenant.stdout)).toMatchObject({
      layer: "tenant",
      paths: ["server-tools/tenant_only.yaml"],
    });
    const bad = await fetch(`${server.base}/v1/tenants/acme/projects/cli/documents?prefix=../x/`, {
      headers,
    });
    expect(bad.status).toBe(400);
  });

  it("on a terminal, push draws a progress bar and colours its summary; a pipe gets neither", async () => {
    const dir = folder({ "server-tools/tty_a.yaml": doc("A"), "server-tools/tty_b.yaml": doc("B") });
    let out = "";
    let err = "";
    const code = await runCli(
      ["node", "vance-tools", "push", dir],
      {
        out: { write: (text: string) => (out += text), isTTY: true },
        err: { write: (text: string) => (err += text), isTTY: true, columns: 80 },
      },
      { ...env, NO_COLOR: "" },
    );
    expect(code).toBe(0);
    expect(err).toContain("\r\u001b[2K[------------------------] 0/2 server-tools/tty_a.yaml");
    expect(err).toContain("[############------------] 1/2 server-tools/tty_b.yaml");
    expect(out).toContain("\u001b[32mcreated 2\u001b[39m");
    const piped = await runHere(["push", dir]);
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toBe("created 0, replaced 0, unchanged 2, failed 0\n");
  });

  it("put with a stale ETag reports the conflict with its code", async () => {
    const dir = folder({ "server-tools/stale_one.yaml": doc("First") });
    const file = join(dir, "server-tools/stale_one.yaml");
    const created = JSON.parse((await runHere(["--json", "put", file])).stdout);
    expect(created).toMatchObject({ path: "server-tools/stale_one.yaml", created: true });
    const got = await runHere(["get", "stale_one"]);
    expect(got.stdout).toBe(doc("First"));
    expect(got.stderr).toContain(`ETag: ${created.etag}`);

    writeFileSync(file, doc("Second"));
    expect((await runHere(["put", file, "--if-match", created.etag])).code).toBe(0);
    writeFileSync(file, doc("Third"));
    const stale = await run(["put", file, "--if-match", created.etag]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^error: .+ \[precondition_failed, HTTP 412\]$/m);
    const asJson = JSON.parse((await runHere(["--json", "put", file, "--if-match", created.etag])).stdout);
    expect(asJson.error).toMatchObject({ code: "precondition_failed", status: 412 });
  });

  it("invoke, usage, manifest, delete and secrets speak the API, refusals with the server's code", async () => {
    const invoked = await runHere(["invoke", "cli_tool_1"]);
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(invoked.stdout).toMatch(/^# .*\n/);
    expect(invoked.stdout).toContain("Vance Server Tools");
    const asJson = JSON.parse((await runHere(["--json", "invoke", "cli_tool_1"])).stdout);
    expect(asJson).toMatchObject({
      value: expect.stringContaining("Vance Server Tools"),
      durationMs: expect.any(Number),
    });
    const invalid = await runHere(["invoke", "cli_tool_1", "--params", '{"x":1}']);
    expect(invalid.stderr).toContain("[invalid_params, HTTP 422]");

    const spawned = await fetch(`${server.base}/v1/tenants/acme/projects/cli/processes`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.VANCE_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ recipe: "cli", engineDefault: ["@cli"], models: ["openai/gpt-4.1"] }),
    });
    const { processId } = (await spawned.json()) as { processId: string };
    await fetch(`${server.base}/v1/tenants/acme/projects/cli/processes/${processId}/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.VANCE_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "cli_tool_2", params: {} }),
    });
    const usage = await runHere(["usage"]);
    expect(usage.stdout).toMatch(/^cli\s+cli_tool_2\s+1\s+0\s+\S+$/m);
    const manifest = await runHere(["manifest", processId]);
    expect(manifest.stdout).toContain("budget: maxTools 128, reserve 1, limit 127");
    // The call activated cli_tool_2: on the wire from the next turn; the other eight stay deferred.
    expect(manifest.stdout).toMatch(/^on the wire \(3\)\n {2}cli_tool_2\n/m);
    expect(manifest.stdout).toMatch(/^deferred \(8\)$/m);

    expect((await runHere(["secrets", "set", "CLI_TOKEN", "--value", "s3cr3t-value"])).code).toBe(0);
    const secrets = await runHere(["secrets", "list"]);
    expect(secrets.stdout).toMatch(/^CLI_TOKEN\s+\d{4}-/m);
    expect(secrets.stdout).not.toContain("s3cr3t-value");
    expect((await runHere(["secrets", "delete", "CLI_TOKEN"])).code).toBe(0);

    expect((await runHere(["delete", "cli_tool_8"])).stdout.trim()).toBe(
      "deleted server-tools/cli_tool_8.yaml",
    );
    const gone = await runHere(["get", "cli_tool_8"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("[tool_not_found, HTTP 404]");
  });

  it("another tenant's token is refused with the server's code; an unreachable server is named", async () => {
    const forbidden = await runHere(["list"], { VANCE_TOKEN: await token("globex", ["read"]) });
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(
      /^error: the token is for tenant 'globex', not 'acme' \[forbidden, HTTP 403\]$/m,
    );
    const closed = await listen((await testApp()).app);
    await closed.close();
    const down = await runHere(["list"], { VANCE_URL: closed.base });
    expect(down.stderr).toBe(`error: cannot reach ${closed.base}: ECONNREFUSED\n`);
    const noToken = await runHere(["list"], { VANCE_TOKEN: "" });
    expect(noToken.stderr).toContain("no token: pass --token or set VANCE_TOKEN");
  });
});
