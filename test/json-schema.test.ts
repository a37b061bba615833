import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

type App = Awaited<ReturnType<typeof testApp>>["app"];

/** A JSON client for one project with a read-only token: what an agent engine holds. */
async function readOnlyClient(app: App, tenant = "acme", project = "shop") {
  const headers = await bearer({ tenant, roles: ["read"] });
  const call = async (path: string, body: unknown) => {
    const res = await app.request(`/v1/tenants/${tenant}/projects/${project}${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return {
    spawn: (inputSchema: Record<string, unknown>, name = "match_text") =>
      call("/processes", {
        models: [],
        clientTools: [{ name, description: "Runs on the client.", inputSchema }],
      }),
    invoke: (processId: string, name: string, params: unknown) =>
      call(`/processes/${processId}/invoke`, { name, params }),
  };
}

const REDOS_SCHEMA = { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } };

describe("JSON Schemas from callers: regexes run in linear time (security)", () => {
  it("a read-only token's client tool with a catastrophic pattern cannot stall the server", async () => {
    const { app } = await testApp();
    const engine = await readOnlyClient(app);
    const spawned = await engine.spawn(REDOS_SCHEMA);
    expect(spawned.status).toBe(201);
    const processId = spawned.body.processId as string;

    // Backtracking takes ~2^40 steps here (hours on one core, past the test's time limit); RE2
    // takes one pass.
    const attack = await engine.invoke(processId, "match_text", { s: `${"a".repeat(40)}!` });
    expect(attack.status).toBe(422);
    expect(attack.body).toMatchObject({
      code: "invalid_params",
      errors: [{ path: "s", message: 'must match pattern "^(a+)+$"' }],
    });

    const fine = await engine.invoke(processId, "match_text", { s: "aaaa" });
    expect(fine.status).toBe(200);
    expect(fine.body).toMatchObject({ route: "client", name: "match_text", params: { s: "aaaa" } });
  });
});

describe("JSON Schemas from callers: unusable schemas are 422, never 500 (error cases)", () => {
  it("refuses a spawn whose client tool schema is invalid, unresolved or has a pattern RE2 cannot run", async () => {
    const { app } = await testApp();
    const headers = await bearer({ tenant: "acme", roles: ["read"] });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["invalid", { type: "object", properties: { n: { type: "integr" } } }, /not a valid JSON Schema/],
      [
        "unresolved $ref",
        { type: "object", properties: { n: { $ref: "#/definitions/missing" } } },
        /resolve/,
      ],
      [
        "backreference",
        { type: "object", properties: { s: { type: "string", pattern: "^(a)\\1$" } } },
        /RE2/,
      ],
      ["lookahead", { type: "object", patternProperties: { "^(?!x)": { type: "string" } } }, /RE2/],
    ];
    for (const [what, inputSchema, message] of cases) {
      const res = await app.request("/v1/tenants/acme/projects/shop/processes", {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({
          models: [],
          clientTools: [
            { name: "fine", description: "A usable schema.", inputSchema: { type: "object" } },
            { name: "broken", description: "An unusable schema.", inputSchema },
          ],
        }),
      });
      const body = (await res.json()) as { code: string; errors: { path: string; message: string }[] };
      expect(res.status, what).toBe(422);
      expect(body.code, what).toBe("validation_failed");
      expect(body.errors, what).toEqual([
        { path: "clientTools.1.inputSchema", message: expect.stringMatching(message) },
      ]);
    }
  });

  it("an invalid schema in a stored tool document answers 422 invalid_document at invoke", async () => {
    const { app, documents } = await testApp();
    const client = await projectClient(app);
    // Written behind the API's back, as an older version or another writer could have left it.
    await documents.put(
      "acme/shop/server-tools/lookup_issue.yaml",
      'type: mcp\ndescription: x\nparameters:\n  server: jira\n  toolName: get\n  inputSchema: {type: object, properties: {k: {type: string, pattern: "(?<=x)k"}}}\n',
    );
    const direct = await client.call("POST", "/tools/lookup_issue/invoke", { params: { k: "k" } });
    expect(direct.status).toBe(422);
    expect(direct.body.code).toBe("invalid_document");

    const { processId } = await client.spawn({ allowedToolsAdd: ["lookup_issue"] });
    const inProcess = await client.invoke(processId, "lookup_issue", { k: "k" });
    expect(inProcess.status).toBe(422);
    expect(inProcess.body.code).toBe("invalid_document");
  });

  it("a process record carrying an unusable client schema answers 422 invalid_document at invoke", async () => {
    const state = new SqliteStateStore(":memory:");
    const { app, services } = await testApp({ state });
    const client = await projectClient(app);
    const { processId } = await client.spawn({
      clientTools: [{ name: "legacy", description: "x", inputSchema: { type: "object" } }],
    });
    const record = await services.processes.get("acme", "shop", processId);
    // A record stored before spawns checked schemas, written behind the API's back.
    await state.createProcess({
      ...record,
      processId: "legacy-process",
      clientTools: [{ name: "legacy", description: "x", inputSchema: { type: "object", required: "n" } }],
    });
    const res = await client.invoke("legacy-process", "legacy", { n: 1 });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "invalid_document", errors: [{ path: "inputSchema" }] });
    state.close();
  });

  it("refuses on PUT a rest responseSchema or an mcp inputSchema that does not compile", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const rest =
      'type: rest\ndescription: x\nparameters:\n  url: https://api.example.com/items\n  responseSchema:\n    type: object\n    properties: {id: {type: string, pattern: "^(\\\\d)\\\\1$"}}\n';
    const refused = await client.call("PUT", "/tools/get_items", rest, "application/yaml");
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "parameters.responseSchema", message: expect.stringContaining("RE2"), line: 6 }],
    });

    const mcp =
      "type: mcp\ndescription: x\nparameters:\n  server: jira\n  toolName: get\n  inputSchema: {type: object, properties: {k: {$ref: 'https://schemas.example/k.json'}}}\n";
    const alsoRefused = await client.call("PUT", "/tools/get_issue", mcp, "application/yaml");
    expect(alsoRefused.status).toBe(422);
    expect(alsoRefused.body).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "parameters.inputSchema", message: expect.stringContaining("resolve") }],
    });

    const linear = mcp.replace(
      "{$ref: 'https://schemas.example/k.json'}",
      '{type: string, pattern: "^(a+)+$"}',
    );
    expect((await client.call("PUT", "/tools/get_issue", linear, "application/yaml")).status).toBe(201);
  });
});

describe("JSON Schemas from callers: tenants stay apart (security)", () => {
  it("one tenant's $id neither changes nor becomes reachable from another tenant's schema", async () => {
    const { app } = await testApp();
    const acme = await readOnlyClient(app, "acme", "shop");
    const globex = await readOnlyClient(app, "globex", "main");
    const shared = (type: string) => ({ $id: "shared", type: "object", properties: { n: { type } } });

    const a = await acme.spawn(shared("string"), "record");
    const b = await globex.spawn(shared("integer"), "record");
    expect([a.status, b.status]).toEqual([201, 201]);
    const aId = a.body.processId as string;
    const bId = b.body.processId as string;
    expect((await acme.invoke(aId, "record", { n: "text" })).status).toBe(200);
    expect((await globex.invoke(bId, "record", { n: 5 })).status).toBe(200);
    expect((await globex.invoke(bId, "record", { n: "text" })).body.code).toBe("invalid_params");
    expect((await acme.invoke(aId, "record", { n: 5 })).body.code).toBe("invalid_params");

    const reaching = await globex.spawn({ type: "object", properties: { n: { $ref: "shared" } } }, "peek");
    expect(reaching.status).toBe(422);
    expect(reaching.body.code).toBe("validation_failed");
  });

  it("a remote $ref is never fetched: the spawn is refused and the server sees no request", async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" }).end('{"type":"string"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
      const engine = await readOnlyClient(app);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schema.json`;
      const res = await engine.spawn({ type: "object", properties: { n: { $ref: url } } });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("validation_failed");
      expect(seen).toEqual([]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
