import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type Target } from "./support";

/** Hostile OpenAPI documents against the real server: parsed on the task worker, never on the serving thread. */
describe("attack suite: hostile OpenAPI documents", () => {
  let target: Target;
  const T = "/v1/tenants/hostile/projects/openapi";
  const put = async (path: string, body: string, type = "application/yaml") => {
    const answer = await target.request(`${T}/${path}`, {
      method: "PUT",
      headers: { "content-type": type },
      body,
    });
    expect(answer.status, await answer.clone().text()).toBeLessThan(300);
  };
  const pack = (name: string, spec: string) =>
    put(
      `tools/${name}`,
      `type: openapi\ndescription: a hostile document\nparameters:\n  spec: ${spec}\n  baseUrl: http://127.0.0.1:9/v1\n`,
    );
  const tools = async () => {
    const answer = await target.request(`${T}/tools`);
    return {
      status: answer.status,
      body: (await answer.json()) as { tools: { name: string; stale?: boolean }[] },
    };
  };

  /**
   * Waits until the pack's source is `current` (it fails the case when the source failed): a
   * state, however long a loaded machine takes to parse it; the test's time limit ends a hang.
   */
  const current = async (name: string) => {
    for (;;) {
      const answer = await target.request(`${T}/tools/${name}`);
      const source = ((await answer.json()) as { source?: { status?: string } }).source;
      if (source?.status === "current") return;
      if (source?.status === "failed") throw new Error(`pack ${name} failed: ${JSON.stringify(source)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  beforeAll(async () => {
    target = await startTarget();
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  it("a 1.8 KB document whose 31 schemas each reference the previous one twice (two billion expanded) loads, its operation checked in part", async () => {
    const schemas: Record<string, unknown> = { S0: { type: "string" } };
    for (let i = 1; i <= 30; i++) {
      schemas[`S${i}`] = {
        type: "object",
        required: ["a"],
        properties: {
          a: { $ref: `#/components/schemas/S${i - 1}` },
          b: { $ref: `#/components/schemas/S${i - 1}` },
        },
      };
    }
    const spec = {
      openapi: "3.1.0",
      info: { title: "dag", version: "1" },
      paths: {
        "/x": {
          post: {
            operationId: "explode",
            requestBody: {
              required: true,
              content: { "application/json": { schema: { $ref: "#/components/schemas/S30" } } },
            },
            responses: { "200": { description: "ok" } },
          },
        },
      },
      components: { schemas },
    };
    await put("documents/specs/dag.json", JSON.stringify(spec), "application/json");
    await pack("dag", "specs/dag.json");
    const listed = await target.attack(
      "OpenAPI $ref DAG (31 schemas, each refs the previous twice), listed once it loaded, 5 times",
      async () => {
        await current("dag");
        const answers = [];
        for (let i = 0; i < 5; i++) answers.push(await tools());
        return answers;
      },
      (answers) => `${answers.map((answer) => answer.status).join(",")}; dag__explode listed`,
    );
    expect(listed).toHaveLength(5);
    for (const answer of listed) {
      expect(answer.status).toBe(200);
      expect(answer.body.tools.map((tool) => tool.name)).toContain("dag__explode");
    }
    // Its schema is within the limits of one schema, and a call is checked against it before
    // anything is sent: a wrong value near the root is refused.
    const called = await target.attack(
      "OpenAPI $ref DAG: a call with a wrong value, checked against the bounded schema",
      async () => {
        const answer = await target.request(`${T}/tools/dag__explode/invoke`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ params: { body: { a: 5 } } }),
        });
        return { status: answer.status, body: (await answer.json()) as { code?: string } };
      },
      (answer) => `${answer.status} ${answer.body.code}`,
    );
    expect(called.status).toBe(422);
    expect(called.body.code).toBe("invalid_params");
    const pack_ = await target.request(`${T}/tools`);
    const packs = ((await pack_.json()) as { packs: { pack: string; leftOut: string[] }[] }).packs;
    expect(packs.find((entry) => entry.pack === "dag")?.leftOut).toEqual([
      expect.stringMatching(/^POST \/x: checked in part .* the rest left to the API: /),
    ]);
  });

  it("a 1.5 MB document with 500 operations is parsed off the serving thread and listed", async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 500; i++) {
      paths[`/items${i}/{id}`] = {
        get: {
          operationId: `getItem${i}`,
          summary: `Item ${i} ${"lorem ipsum ".repeat(230)}`,
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "ok" } },
        },
      };
    }
    const text = JSON.stringify({ openapi: "3.1.0", info: { title: "big", version: "1" }, paths });
    expect(text.length).toBeGreaterThan(1_400_000);
    // Larger than a document written through the API may be: written into the store, as a
    // bucket's own writer would.
    const folder = join(target.dataDir, "documents", "hostile", "openapi", "specs");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "big.json"), text);
    await pack("big", "specs/big.json");
    const subTools = (answer: Awaited<ReturnType<typeof tools>>) =>
      answer.body.tools.filter((tool) => tool.name.startsWith("big__"));
    // A listing waits VANCE_SOURCE_WAIT_MS for a source, then answers without it while it loads:
    // the pack's state says when it is in.
    const listing = await target.attack(
      `OpenAPI document of ${(text.length / 1e6).toFixed(1)} MB, 500 operations, listed once it loaded`,
      async () => {
        await current("big");
        return tools();
      },
      (answer) => `${answer.status}, ${subTools(answer).length} sub-tools`,
    );
    expect(listing.status).toBe(200);
    expect(subTools(listing), JSON.stringify(target.logs.filter((line) => line.tool === "big"))).toHaveLength(
      500,
    );
  });
});
