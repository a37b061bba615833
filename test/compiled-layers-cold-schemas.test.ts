import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { compiledLayerKey, JsonSchemaValidator } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

/**
 * Issue 35 §2 on a cold instance: a stored tool document read where no compiled layer index holds
 * it is parsed on the serving thread, and its schemas checked; a schema of 200 nodes or more is
 * compiled on the parse worker first (`/v1/metrics` `schemaCompiles`), whether the document is
 * read by a call (its lookup) or by a listing. The call then checks params exactly as a validator
 * compiled in one piece answers.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** 330 properties, 60 with a pattern (993 nodes), two required: at the caps. */
const SCHEMA = {
  type: "object",
  required: ["w_0", "w_100"],
  properties: Object.fromEntries(
    Array.from({ length: 330 }, (_, i) => [
      `w_${i}`,
      i < 60 ? { type: "string", pattern: `^w${i}[a-z]*$` } : { type: "integer", minimum: i },
    ]),
  ),
};

const DOCUMENT = [
  "type: mcp",
  "description: a tool whose input schema is at the caps",
  "parameters:",
  "  server: nowhere",
  "  toolName: wide",
  `  inputSchema: ${JSON.stringify(SCHEMA)}`,
  "",
].join("\n");

/** Params that break the schema four ways: a pattern, a minimum, a type, a required name. */
const BAD_PARAMS = { w_0: "nope", w_60: 1, w_61: "x" };

interface Compiles {
  servingThread: number;
  servingThreadLarge: number;
  worker: number;
}

/** A fresh instance (its own services and caches) over the shared data directory, with no compiled index. */
async function coldInstance(dir: string) {
  const fs = new FsObjectStore(join(dir, "documents"));
  const index = await fs.get(compiledLayerKey("acme", "shop"));
  if (index !== null) await fs.delete(compiledLayerKey("acme", "shop"));
  const { app, services } = await testApp({ dataDir: dir, documents: fs });
  const client = await projectClient(app);
  const compiles = async (): Promise<Compiles> => {
    const answer = await app.request("/v1/metrics", { headers: await bearer({ tenant: "*", roles: [] }) });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { schemaCompiles: Compiles }).schemaCompiles;
  };
  return { client, compiles, services, fs };
}

/** A data directory whose store holds `wide`, written straight into it (as a bulk import would): no instance parsed it. */
async function seededDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "vance-cold-schemas-"));
  dirs.push(dir);
  const seeded = await new FsObjectStore(join(dir, "documents")).put(
    "acme/shop/server-tools/wide.yaml",
    DOCUMENT,
    {
      contentType: "application/yaml",
    },
  );
  expect(seeded.ok).toBe(true);
  return dir;
}

describe("a cold instance reading a stored tool document with a schema at the caps", () => {
  it("compiles it on the worker, never on the serving thread, on a call's lookup and on a listing; the call's field errors are as before", async () => {
    const dir = await seededDir();
    const reference = (await new JsonSchemaValidator().ready()).compile(SCHEMA);
    if (!reference.ok) throw new Error(reference.message);
    const expectedErrors = reference.validate(BAD_PARAMS);
    expect(expectedErrors.length).toBeGreaterThanOrEqual(4);

    // A call on a cold instance: the lookup parses the document, the call checks its params.
    const byCall = await coldInstance(dir);
    const before = await byCall.compiles();
    const called = await byCall.client.call("POST", "/tools/wide/invoke", { params: BAD_PARAMS });
    expect(called.status).toBe(422);
    expect(called.body).toMatchObject({ code: "invalid_params", errors: expectedErrors });
    const after = await byCall.compiles();
    expect(after.servingThreadLarge - before.servingThreadLarge, "large compiles on the serving thread").toBe(
      0,
    );
    expect(after.worker - before.worker, "compiles on the worker").toBe(1);

    // A listing on another cold instance: the merge parses it; the call after it compiles nothing.
    const byListing = await coldInstance(dir);
    const start = await byListing.compiles();
    const listed = await byListing.client.call("GET", "/tools");
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain('"wide"');
    const again = await byListing.client.call("POST", "/tools/wide/invoke", { params: BAD_PARAMS });
    const { requestId: _first, ...firstAnswer } = called.body;
    const { requestId: _second, ...secondAnswer } = again.body;
    expect({ status: again.status, ...secondAnswer }).toEqual({ status: called.status, ...firstAnswer });
    const end = await byListing.compiles();
    expect(end.servingThreadLarge - start.servingThreadLarge, "large compiles on the serving thread").toBe(0);
    expect(end.worker - start.worker, "compiles on the worker").toBe(1);
  });

  it("a rebuild of the layer's compiled index (a document stored behind the API's back) compiles it on the worker too", async () => {
    const cold = await coldInstance(await seededDir());
    const before = await cold.compiles();
    expect(await cold.services.compiledLayers.rebuild("acme", "shop")).toBe("written");
    const after = await cold.compiles();
    expect(after.servingThreadLarge - before.servingThreadLarge, "large compiles on the serving thread").toBe(
      0,
    );
    expect(after.worker - before.worker, "compiles on the worker").toBe(1);
    expect(await cold.fs.get(compiledLayerKey("acme", "shop"))).not.toBeNull();
  });
});
