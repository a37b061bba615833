import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@vance/cli";
import type { Logger, OpenApiCompiler } from "@vance/core";
import { MAX_OPENAPI_SPEC_BYTES } from "@vance/core";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../functions/api/config";
import { workerOpenApiCompiler } from "../functions/api/services";
import { SESSION_COOKIE } from "../functions/api/ui/routes";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { listen, token } from "./support/ui-project";

// Issue 23 item 2: a pack whose source fails is never invisible. Its document is listed with its
// state and reason in `GET T/tools`, `vance-tools list`, the web listing and the pack's own page,
// and one WARN line names tenant, project and pack per change of state.

const SPEC = `openapi: 3.1.0
info: { title: Tiny, version: "1" }
servers: [{ url: "https://tiny.invalid" }]
paths:
  /things:
    get: { operationId: listThings, summary: List things }
  /upload:
    post:
      operationId: upload
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema: { type: object }
`;

const PACK = "type: openapi\ndescription: The tiny API\nparameters:\n  spec: specs/tiny.yaml\n";

interface Line {
  level: "info" | "warn";
  event: string;
  fields: Readonly<Record<string, unknown>>;
}

function recorder(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    info: (event, fields = {}) => lines.push({ level: "info", event, fields }),
    warn: (event, fields = {}) => lines.push({ level: "warn", event, fields }),
  };
}

async function setUp(options: { now?: () => number; openApi?: OpenApiCompiler } = {}) {
  const logger = recorder();
  const setup = await testApp({ logger, ...options });
  const client = await projectClient(setup.app);
  const stateLines = () => logger.lines.filter((line) => line.event === "pack.source_state");
  return { ...setup, client, logger, stateLines };
}

type Client = Awaited<ReturnType<typeof setUp>>["client"];

async function packState(client: Client, pack: string) {
  const listed = await client.call("GET", "/tools");
  expect(listed.status).toBe(200);
  const packs = listed.body.packs as { pack: string }[];
  return { listed: listed.body, state: packs.find((entry) => entry.pack === pack) };
}

describe("a pack whose source fails stays visible", () => {
  it("missing spec: listed unavailable with its reason in GET T/tools, on GET T/tools/{pack}, in the CLI, the web listing and the pack page; one WARN line", async () => {
    const { app, client, stateLines } = await setUp();
    await client.putTool("tiny", PACK);

    const { listed, state } = await packState(client, "tiny");
    expect(listed.tools).toEqual(expect.not.arrayContaining([expect.objectContaining({ pack: "tiny" })]));
    expect(state).toEqual({
      pack: "tiny",
      layer: "project",
      status: "unavailable",
      reason: expect.stringContaining(
        "the OpenAPI spec 'specs/tiny.yaml' of pack 'tiny' is not in this project's cascade",
      ),
      subTools: 0,
      leftOut: [],
    });
    expect(listed.stalePacks).toEqual([expect.objectContaining({ pack: "tiny", status: "unavailable" })]);

    const own = await client.call("GET", "/tools/tiny");
    expect(own.status).toBe(200);
    expect(own.body.source).toEqual(state);

    // Listed three times, one WARN line, naming whose pack it is.
    await client.call("GET", "/tools");
    expect(stateLines()).toEqual([
      {
        level: "warn",
        event: "pack.source_state",
        fields: expect.objectContaining({
          tenant: "acme",
          project: "shop",
          pack: "tiny",
          status: "unavailable",
        }),
      },
    ]);

    // The CLI's listing says so below its table.
    const server = await listen(app);
    try {
      let stdout = "";
      let stderr = "";
      const code = await runCli(
        ["node", "vance-tools", "list"],
        {
          out: { write: (text: string) => (stdout += text) },
          err: { write: (text: string) => (stderr += text) },
        },
        {
          NO_COLOR: "1",
          VANCE_URL: server.base,
          VANCE_TOKEN: await token("acme", ["read"]),
          VANCE_TENANT: "acme",
          VANCE_PROJECT: "shop",
        },
      );
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("pack tiny (project): unavailable, 0 sub-tools: ");
      expect(stderr).toContain("is not in this project's cascade");
    } finally {
      await server.close();
    }

    // The web listing has the pack's head row with its state; its page says why.
    const session = await app.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${await token("acme", ["read"])}` },
    });
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    expect(cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
    const listing = await (
      await app.request("/ui/tenants/acme/projects/shop", { headers: { cookie } })
    ).text();
    expect(listing).toContain("Pack tiny — 0 sub-tools");
    expect(listing).toMatch(/state-off">unavailable<\/span> pack &#39;tiny&#39; has no sub-tools right now/);
    const page = await (
      await app.request("/ui/tenants/acme/projects/shop/tools/tiny", { headers: { cookie } })
    ).text();
    expect(page).toContain('<h2 id="source">Source</h2>');
    expect(page).toContain("0 (tiny__*)");
    expect(page).toContain("is not in this project&#39;s cascade");

    // The spec arrives: current, its sub-tool listed, the multipart operation named as left out,
    // and one INFO line for the change back.
    const put = await client.call("PUT", "/documents/specs/tiny.yaml", SPEC, "application/yaml");
    expect(put.status).toBe(201);
    const after = await packState(client, "tiny");
    expect(after.state).toEqual({
      pack: "tiny",
      layer: "project",
      status: "current",
      subTools: 1,
      leftOut: [expect.stringContaining("POST /upload: left out")],
    });
    expect(after.listed.stalePacks).toEqual([]);
    expect(stateLines().map((line) => [line.level, line.fields.status])).toEqual([
      ["warn", "unavailable"],
      ["info", "current"],
    ]);
  });

  it("unparsable spec: unavailable, the parser's reason shown; not parsed again until its version changes or the TTL passes", async () => {
    const now = { t: 1_000_000 };
    let compiles = 0;
    const worker = workerOpenApiCompiler(loadConfig({ VANCE_DATA_DIR: tmpdir() }));
    const { client, stateLines } = await setUp({
      now: () => now.t,
      openApi: (request) => {
        compiles++;
        return worker(request);
      },
    });
    await client.call("PUT", "/documents/specs/tiny.yaml", "openapi: 2.0\npaths: [", "application/yaml");
    await client.putTool("tiny", PACK);
    const { state } = await packState(client, "tiny");
    expect(state).toMatchObject({
      status: "unavailable",
      reason: expect.stringContaining("the OpenAPI spec 'specs/tiny.yaml' is not usable"),
      subTools: 0,
    });
    expect(stateLines()).toHaveLength(1);
    // Past two retry pauses (5 s each) but within the TTL: the same version is not parsed again.
    for (let pause = 0; pause < 2; pause++) {
      now.t += 6_000;
      expect((await packState(client, "tiny")).state).toMatchObject({ status: "unavailable" });
    }
    expect(compiles).toBe(1);
    now.t += 60_000;
    await packState(client, "tiny");
    expect(compiles).toBe(2);
  });

  it("too-large spec (written behind the API's back): unavailable, naming the cap", async () => {
    const { client, dataDir } = await setUp();
    const folder = join(dataDir, "documents", "acme", "shop", "specs");
    mkdirSync(folder, { recursive: true });
    // Valid JSON of one byte more than the cap: the size alone refuses it.
    const padding = "x".repeat(MAX_OPENAPI_SPEC_BYTES);
    writeFileSync(join(folder, "tiny.json"), JSON.stringify({ openapi: "3.1.0", padding }));
    await client.putTool("tiny", PACK.replace("tiny.yaml", "tiny.json"));
    const { state } = await packState(client, "tiny");
    expect(state).toMatchObject({
      status: "unavailable",
      reason: expect.stringContaining(`at most ${MAX_OPENAPI_SPEC_BYTES} are accepted`),
      subTools: 0,
    });
  });

  it("unreachable spec URL: unavailable, naming the fetch's failure", async () => {
    const { client } = await setUp();
    await client.putTool(
      "far",
      "type: openapi\ndescription: Far away\nparameters:\n  spec: https://spec.invalid/openapi.json\n  timeoutMs: 2000\n",
    );
    const { state } = await packState(client, "far");
    expect(state).toMatchObject({
      status: "unavailable",
      reason: expect.stringContaining("fetching the OpenAPI spec https://spec.invalid/openapi.json failed"),
      subTools: 0,
    });
  });
});
