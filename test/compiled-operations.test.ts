import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inProcessOpenApiCompiler } from "@vance/adapters/testing";
import { COMPILED_PREFIX, type Logger, type OpenApiCompiler } from "@vance/core";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

// Issue 23 item 1: a spec's compiled operation list is kept beside the document (`_compiled/`
// in the documents store), so an instance with empty caches — a cold Lambda — reads one object
// instead of parsing the spec again. What it reads is checked; anything else is compiled anew.

const SPEC = `openapi: 3.1.0
info: { title: Tiny, version: "1" }
servers: [{ url: "https://tiny.invalid" }]
paths:
  /things:
    get: { operationId: listThings, summary: List things }
    post:
      operationId: addThing
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: { name: { type: string } } }
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

function recorder(): Logger & { events: string[] } {
  const events: string[] = [];
  return { events, info: (event) => events.push(event), warn: (event) => events.push(event) };
}

/** An app instance over `dataDir` with caches of its own, counting its compiles. */
async function instance(dataDir: string) {
  const compiler = inProcessOpenApiCompiler();
  const counted = { compiles: 0 };
  const openApi: OpenApiCompiler = (request) => {
    counted.compiles++;
    return compiler(request);
  };
  const logger = recorder();
  const setup = await testApp({ dataDir, openApi, logger });
  const client = await projectClient(setup.app);
  const pack = async () => {
    const listed = await client.call("GET", "/tools");
    const names = (listed.body.tools as { name: string; pack?: string }[])
      .filter((tool) => tool.pack === "tiny")
      .map((tool) => tool.name);
    const state = (listed.body.packs as Record<string, unknown>[]).find((entry) => entry.pack === "tiny");
    return { names, state };
  };
  return { ...setup, client, counted, logger, pack };
}

function keptFiles(dataDir: string): string[] {
  const folder = join(dataDir, "documents", COMPILED_PREFIX, "acme", "shop", "openapi");
  return readdirSync(folder).filter((name) => name.endsWith(".json"));
}

describe("compiled operation lists kept beside the spec", () => {
  it("a second instance with fresh caches lists the pack with no compile; a new version of the spec is compiled once and replaces the list", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-compiled-"));
    const first = await instance(dataDir);
    await first.client.call("PUT", "/documents/specs/tiny.yaml", SPEC, "application/yaml");
    await first.client.putTool("tiny", PACK);
    const listed = await first.pack();
    expect(listed.names).toEqual(["tiny__add_thing", "tiny__list_things"]);
    expect(listed.state).toMatchObject({ status: "current", subTools: 2 });
    expect(first.counted.compiles).toBe(1);
    expect(keptFiles(dataDir)).toHaveLength(1);

    const second = await instance(dataDir);
    const again = await second.pack();
    expect(again).toEqual(listed);
    expect(second.counted.compiles).toBe(0);
    // The kept list serves calls too: its operation targets came along.
    const shown = await second.client.call("GET", "/tools/tiny__add_thing");
    expect(shown.status).toBe(200);

    // A new version: the second instance compiles it once and replaces the kept list.
    await second.client.call(
      "PUT",
      "/documents/specs/tiny.yaml",
      SPEC.replace("listThings", "listAllThings"),
      "application/yaml",
    );
    expect((await second.pack()).names).toEqual(["tiny__add_thing", "tiny__list_all_things"]);
    expect(second.counted.compiles).toBe(1);
    expect(keptFiles(dataDir)).toHaveLength(1);
    const third = await instance(dataDir);
    expect((await third.pack()).names).toEqual(["tiny__add_thing", "tiny__list_all_things"]);
    expect(third.counted.compiles).toBe(0);
  });

  it("a kept list that is corrupt, of the wrong shape or of another version is not trusted: compiled again, and replaced", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-compiled-"));
    const first = await instance(dataDir);
    await first.client.call("PUT", "/documents/specs/tiny.yaml", SPEC, "application/yaml");
    await first.client.putTool("tiny", PACK);
    const listed = await first.pack();
    const [file] = keptFiles(dataDir);
    const path = join(dataDir, "documents", COMPILED_PREFIX, "acme", "shop", "openapi", file!);
    const kept = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

    const tampered: [string, string][] = [
      ["not JSON", "{ truncated"],
      // A tool whose target is not an operation's: never served.
      [
        "wrong shape",
        JSON.stringify({ ...kept, tools: [{ sourceName: "evil", description: "", inputSchema: {} }] }),
      ],
      // Well-formed, but compiled from another version of the spec.
      [
        "another version",
        JSON.stringify({ ...kept, spec: { ...(kept.spec as object), etag: '"old"' }, tools: [] }),
      ],
    ];
    for (const [what, body] of tampered) {
      writeFileSync(path, body);
      const cold = await instance(dataDir);
      expect(await cold.pack(), what).toEqual(listed);
      expect(cold.counted.compiles, what).toBe(1);
      if (what !== "another version") expect(cold.logger.events, what).toContain("openapi.compiled_ignored");
      // Replaced by the compile: the next cold instance reads it again.
      const next = await instance(dataDir);
      expect(await next.pack(), what).toEqual(listed);
      expect(next.counted.compiles, what).toBe(0);
    }
  });

  it("kept lists are no documents: the layer's document listing does not show them", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-compiled-"));
    const first = await instance(dataDir);
    await first.client.call("PUT", "/documents/specs/tiny.yaml", SPEC, "application/yaml");
    await first.client.putTool("tiny", PACK);
    await first.pack();
    expect(keptFiles(dataDir)).toHaveLength(1);
    const documents = await first.client.call("GET", "/documents");
    expect(JSON.stringify(documents.body)).not.toContain("_compiled");
  });
});
