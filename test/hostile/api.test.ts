import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeLlmEndpoint, openAiCompletion } from "../support/fake-llm";
import { schemaAtTheCaps, startTarget, startUpstream, type Target } from "./support";

/** Hostile requests with ordinary tenant tokens against the real server: 4xx or tool errors, never a freeze or a 500. */
describe("attack suite: hostile requests", () => {
  let target: Target;
  let reader: string;
  const T = "/v1/tenants/hostile/projects/api";
  const json = (body: unknown, token?: string): RequestInit & { token?: string } => ({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(token ? { token } : {}),
  });
  const answered = async (response: Response) => ({
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  });
  const put = async (path: string, body: string, type = "application/yaml") =>
    answered(await target.request(path, { method: "PUT", headers: { "content-type": type }, body }));

  beforeAll(async () => {
    target = await startTarget();
    reader = await target.token_("hostile", ["read"]);
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  it("an observed-limit report of 'tools' and 80,000 spaces, with a read token, is read in linear time", async () => {
    const answer = await target.attack(
      "POST /v1/models/observed-limits, 'tools' + 80,000 spaces (read token)",
      async () =>
        answered(
          await target.request(
            "/v1/models/observed-limits",
            json({ model: "openai/gpt-4.1", error: `tools${" ".repeat(80_000)}` }, reader),
          ),
        ),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(answer).toMatchObject({ status: 422, body: { code: "no_limit_in_error" } });
  });

  it("a client tool whose 141 KB schema nests anyOf is refused at spawn before Ajv compiles it", async () => {
    // anyOf four wide, six deep: 4,096 leaves in 141 KB (within the bodies' depth and size).
    const nest = (depth: number): unknown =>
      depth === 0
        ? { type: "number", minimum: 10 }
        : { anyOf: Array.from({ length: 4 }, () => nest(depth - 1)) };
    const schema = nest(6);
    expect(JSON.stringify(schema).length).toBeGreaterThan(141_000);
    const answer = await target.attack(
      "spawn with a 141 KB nested-anyOf client-tool schema (read token)",
      async () =>
        answered(
          await target.request(
            `${T}/processes`,
            json(
              {
                models: ["openai/gpt-4.1"],
                clientTools: [
                  {
                    name: "deep",
                    description: "deep",
                    inputSchema: { type: "object", properties: { q: schema } },
                  },
                ],
              },
              reader,
            ),
          ),
        ),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(answer, JSON.stringify(answer.body).slice(0, 300)).toMatchObject({
      status: 422,
      body: { code: "validation_failed" },
    });
    expect(JSON.stringify(answer.body.errors)).toMatch(/too large/);
  });

  it("spawns whose client tool has a fresh schema at the size caps (993 nodes, 60 patterns) are checked on a worker: the serving thread compiles none", async () => {
    const compiledHere = async () => {
      const metrics = (await (await target.request("/v1/metrics")).json()) as {
        caches: { name: string; entries?: number }[];
      };
      return metrics.caches.find((cache) => cache.name === "jsonSchemas")?.entries;
    };
    const before = await compiledHere();
    expect(before).toBeTypeOf("number");
    // A tenant of its own: the other cases count the processes of theirs.
    const schemer = await target.token_("hostile-schemas", ["read"]);
    const statuses = await target.attack(
      "6 spawns, each with a fresh client-tool schema at the size caps, 2 in flight (read token)",
      async () => {
        const spawn = async (round: number) => {
          const tag = `c${round}x${Math.random().toString(36).slice(2, 8)}`;
          const response = await target.request(
            "/v1/tenants/hostile-schemas/projects/api/processes",
            json(
              {
                models: [],
                clientTools: [{ name: "wide", description: "wide", inputSchema: schemaAtTheCaps(tag) }],
              },
              schemer,
            ),
          );
          await response.body?.cancel();
          return response.status;
        };
        const seen: number[] = [];
        for (let round = 0; round < 6; round += 2)
          seen.push(...(await Promise.all([spawn(round), spawn(round + 1)])));
        return seen;
      },
      (seen) => seen.join(" "),
    );
    expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
    expect(await compiledHere()).toBe(before);
  });

  it("a spawn of 25 client tools, each within the schema cap, is refused by their shared budget", async () => {
    const clientTools = Array.from({ length: 25 }, (_, tool) => ({
      name: `client_${tool}`,
      description: "one of many",
      inputSchema: {
        type: "object",
        properties: Object.fromEntries(
          Array.from({ length: 300 }, (_, index) => [`p${tool}_${index}`, { type: "integer" }]),
        ),
      },
    }));
    const answer = await target.attack(
      "spawn with 25 client tools of 600 schema nodes each (read token)",
      async () => answered(await target.request(`${T}/processes`, json({ models: [], clientTools }, reader))),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(answer).toMatchObject({ status: 422, body: { code: "validation_failed" } });
    expect(JSON.stringify(answer.body.errors)).toMatch(/at most 3000 are accepted/);
  });

  it("a rest answer of 300,000 values is refused before it is parsed, scrubbed and re-encoded", async () => {
    const wide = JSON.stringify(
      Object.fromEntries(Array.from({ length: 300_000 }, (_, index) => [`k${index}`, 0])),
    );
    const upstream = await startUpstream((_request, _body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(wide);
    });
    try {
      const tool = await put(
        `${T}/tools/wide_rest`,
        `type: rest\ndescription: wide\nparameters:\n  url: ${upstream.url}/wide\n`,
      );
      expect(tool.status, JSON.stringify(tool.body)).toBeLessThan(300);
      const answer = await target.attack(
        `rest answer of 300,000 keys (${(wide.length / 1e6).toFixed(1)} MB)`,
        async () =>
          answered(await target.request(`${T}/tools/wide_rest/invoke`, json({ params: {} }, reader))),
        (result) => `${result.status} ${String(result.body.error)}`,
      );
      expect(answer).toMatchObject({ status: 200, body: { error: "ResponseTooLarge" } });
    } finally {
      await upstream.close();
    }
  });

  it("a rest responseSchema with a nested quantifier checks 10,000 strings of 101 characters in linear time", async () => {
    // `^(a+)+$` against "aaa…a!" is the classic backtracking freeze; RE2 runs it in linear time.
    const strings = JSON.stringify(Array.from({ length: 10_000 }, () => `${"a".repeat(100)}!`));
    const upstream = await startUpstream((_request, _body, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(strings);
    });
    try {
      const schema = JSON.stringify({ type: "array", items: { type: "string", pattern: "^(a+)+$" } });
      const tool = await put(
        `${T}/tools/checked_rest`,
        `type: rest\ndescription: checked\nparameters:\n  url: ${upstream.url}/strings\n  responseSchema: ${schema}\n`,
      );
      expect(tool.status, JSON.stringify(tool.body)).toBeLessThan(300);
      const answer = await target.attack(
        `rest answer of 10,000 strings against responseSchema pattern ^(a+)+$ (${(strings.length / 1e6).toFixed(1)} MB)`,
        async () =>
          answered(await target.request(`${T}/tools/checked_rest/invoke`, json({ params: {} }, reader))),
        (result) => `${result.status} ${String(result.body.error)}`,
      );
      expect(answer).toMatchObject({ status: 200, body: { error: "ResponseSchemaError" } });
      expect(String(answer.body.message)).toMatch(/does not match responseSchema/);
    } finally {
      await upstream.close();
    }
  });

  it("an mcp tool whose inputSchema needs backtracking (a backreference) is refused on write", async () => {
    const schema = JSON.stringify({
      type: "object",
      properties: { q: { type: "string", pattern: "^(a|aa)+\\1$" } },
    });
    const answer = await target.attack(
      "PUT of an mcp tool whose inputSchema pattern is a backreference",
      () =>
        put(
          `${T}/tools/backref_mcp`,
          `type: mcp\ndescription: backref\nparameters:\n  server: nowhere\n  toolName: q\n  inputSchema: ${schema}\n`,
        ),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(answer).toMatchObject({ status: 422, body: { code: "validation_failed" } });
    expect(JSON.stringify(answer.body.errors)).toMatch(/inputSchema/);
  });

  it("a script calling a prompt_template of a model the catalog lacks 1,000 times is answered at once", async () => {
    const stored = [
      await put(
        `${T}/tools/ask_nobody`,
        "type: prompt_template\ndescription: asks a model the catalog lacks\nparameters:\n  promptPrefix: p\n  model: nowhere/none\n",
      ),
      await put(
        `${T}/tools/ask_often`,
        `type: scripted\ndescription: asks 1,000 times\nparameters:\n  timeoutMs: 30000\n  inputs: []\n  source: |\n    let failed = 0, last;\n    for (let i = 0; i < 1000; i++) { try { vance.tools.call("ask_nobody", { input: "x" }) } catch (e) { failed++; last = e.code } }\n    ({ failed, last })\n`,
      ),
    ];
    for (const result of stored) expect(result.status, JSON.stringify(result.body)).toBeLessThan(300);
    // The longest deadline a script may ask: at load ~17 (two suites on 2 cores) the 1,000 refusals
    // outran the default one after 5.6 s of wall time; what is asserted is that each is refused at
    // once (no call waits on a model), not how fast a loaded machine runs them.
    const answer = await target.attack(
      "scripted tool calling a prompt_template of an unknown model 1,000 times",
      async () => answered(await target.request(`${T}/tools/ask_often/invoke`, json({ params: {} }, reader))),
      (result) => `${result.status} ${JSON.stringify(result.body.value ?? result.body.error)}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.value).toEqual({ failed: 1_000, last: "ModelNotFound" });
  });

  it("a document named …/diagnostics/empty-response gets the documents' limit, not the diagnosis's", async () => {
    const body = "x".repeat(5 * 1024 * 1024);
    const status = await target.attack(
      "PUT T/documents/x/diagnostics/empty-response, 5 MB (and 5 MB chunked)",
      async () => [
        await target.putLarge(`${T}/documents/x/diagnostics/empty-response`, body, {
          contentType: "text/plain",
        }),
        await target.putLarge(`${T}/documents/y/diagnostics/empty-response`, body, {
          contentType: "text/plain",
          chunked: true,
        }),
      ],
      (result) => result.join(", "),
    );
    expect(status).toEqual([413, 413]);
    expect((await target.request(`${T}/documents/x/diagnostics/empty-response`)).status).toBe(404);
  });

  it.each([
    ["params", (deep: string) => [`${T}/tools/doc_getting_started/invoke`, `{"params":{"a":${deep}}}`]],
    [
      "a diagnosis report",
      (deep: string) => [
        `${T}/diagnostics/empty-response`,
        `{"requestId":"r1","offeredTools":[],"messages":[{"role":"user","content":${deep}}]}`,
      ],
    ],
    ["a spawn", (deep: string) => [`${T}/processes`, `{"models":[],"recipe":${deep}}`]],
  ])("%s nested 40,000 deep answer 413, not 500", async (what, request) => {
    const deep = `${"[".repeat(40_000)}1${"]".repeat(40_000)}`;
    const [path, body] = request(deep) as [string, string];
    const answer = await target.attack(
      `${what} nested 40,000 deep`,
      async () => answered(await target.request(path, json(body, reader))),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(answer).toMatchObject({ status: 413, body: { code: "payload_too_large" } });
    expect(String(answer.body.detail)).toMatch(/nests deeper than 64 levels/);
  });

  it("a script answering a value nested 3,000 deep is a tool error, not a 500", async () => {
    const stored = await put(
      `${T}/tools/deep_value`,
      "type: scripted\ndescription: nests deep\nparameters:\n  inputs: []\n  source: |\n    let a = 1; for (let i = 0; i < 3000; i++) a = [a]; a\n",
    );
    expect(stored.status, JSON.stringify(stored.body)).toBeLessThan(300);
    const answer = await target.attack(
      "scripted tool answering a value nested 3,000 deep",
      async () =>
        answered(await target.request(`${T}/tools/deep_value/invoke`, json({ params: {} }, reader))),
      (result) => `${result.status} ${String(result.body.error ?? result.body.code)}`,
    );
    expect(answer).toMatchObject({ status: 200, body: { error: "ValueTooComplex" } });
  });

  it("a model answering '```json' and 50,000 blank lines is LlmInvalidJson, found in linear time", async () => {
    const llm = await fakeLlmEndpoint(() => ({
      json: openAiCompletion(`\`\`\`json${" \n".repeat(50_000)}`),
    }));
    try {
      const provider = await put(
        "/v1/models/hostilellm/_provider",
        `wireType: openai\nbaseUrl: ${llm.baseUrl}\n`,
      );
      expect(provider.status).toBeLessThan(300);
      expect((await put("/v1/models/hostilellm/m", "size: small\n")).status).toBeLessThan(300);
      const tool = await put(
        `${T}/tools/fenced`,
        "type: prompt_template\ndescription: answers JSON\nparameters:\n  promptPrefix: Answer in JSON.\n  model: hostilellm/m\n  responseFormat: json\n  inputs:\n    - { name: q, type: string }\n",
      );
      expect(tool.status, JSON.stringify(tool.body)).toBeLessThan(300);
      const answer = await target.attack(
        "prompt_template answered '```json' + 50,000 ' \\n'",
        async () =>
          answered(await target.request(`${T}/tools/fenced/invoke`, json({ params: { q: "x" } }, reader))),
        (result) => `${result.status} ${String(result.body.error)}`,
      );
      expect(answer).toMatchObject({ status: 200, body: { error: "LlmInvalidJson" } });
    } finally {
      await llm.close();
    }
  });

  it("initialize requests that MCP refuses (406, invalid, a notification) leave no process behind", async () => {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    };
    const send = (body: unknown, accept: string) =>
      target.request(`${T}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept },
        body: JSON.stringify(body),
        token: reader,
      });
    const both = "application/json, text/event-stream";
    const statuses = await target.attack(
      "T/mcp initialize refused 3 ways",
      async () => [
        (await send(initialize, "application/json")).status,
        (await send({ ...initialize, params: { protocolVersion: 7 } }, both)).status,
        (await send({ jsonrpc: "2.0", method: "initialize", params: initialize.params }, both)).status,
      ],
      (result) => result.join(", "),
    );
    expect(statuses[0]).toBe(406);
    expect(statuses[1]).toBeGreaterThanOrEqual(200);
    expect(statuses[2]).toBe(202);
    const state = new Database(`${target.dataDir}/state.sqlite`, { readonly: true });
    try {
      const row = state.prepare("SELECT count(*) AS n FROM processes WHERE tenant = ?").get("hostile") as {
        n: number;
      };
      expect(row.n).toBe(0);
    } finally {
      state.close();
    }
    const accepted = await send(initialize, both);
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get("mcp-session-id")).toEqual(expect.any(String));
  });

  it("a tool document sent as application/json is read as JSON: malformed is 400 invalid_json, not a YAML 422", async () => {
    const answer = await put(
      `${T}/tools/as_json`,
      '{"type": "doc_lookup", "description": "x",',
      "application/json",
    );
    expect(answer).toMatchObject({ status: 400, body: { code: "invalid_json" } });
  });

  it("catalog URLs with credentials and descriptions with control characters are refused", async () => {
    const credentials = await put(
      "/v1/models/leaky/_provider",
      "wireType: openai\nbaseUrl: https://user:pass@llm.example/v1\n",
    );
    expect(credentials.status).toBe(422);
    expect(JSON.stringify(credentials.body)).toMatch(/must not carry credentials/);
    for (const control of ["\\u001b[31m", "\\u202e", "\\r", "\\u0000"]) {
      const answer = await put(
        `${T}/tools/controlled`,
        `{"type": "doc_lookup", "description": "looks ${control} fine", "parameters": {"path": "documents/x.md"}}`,
        "application/json",
      );
      expect(answer.status, control).toBe(422);
      expect(JSON.stringify(answer.body)).toMatch(/control character/);
    }
  });

  it("a secret an upstream echoes in another case, in base64 or cut short reaches the caller as ***", async () => {
    const secret = "Zq8-hostile-Secret-41f7";
    const echo = await startUpstream((_request, _body, response) => {
      const basic = Buffer.from(`user:${secret}`).toString("base64");
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          upper: secret.toUpperCase(),
          basic: `Basic ${basic}`,
          cut: `${secret.slice(0, 12)}…`,
        }),
      );
    });
    try {
      const stored = await target.request("/v1/tenants/hostile/secrets/ECHOED", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ value: secret }),
      });
      expect(stored.status).toBe(204);
      const tool = await put(
        `${T}/tools/echoes`,
        `type: rest\ndescription: echoes\nparameters:\n  url: ${echo.url}/echo\n  headers: { X-Key: "\${secret:ECHOED}" }\n`,
      );
      expect(tool.status, JSON.stringify(tool.body)).toBeLessThan(300);
      const answer = await answered(
        await target.request(`${T}/tools/echoes/invoke`, json({ params: {} }, reader)),
      );
      expect(answer.status).toBe(200);
      const value = answer.body.value as Record<string, string>;
      expect(value.upper).toBe("***");
      expect(value.basic).toContain("***");
      expect(
        Buffer.from(value.basic!.replace("Basic ", "").replace("***", ""), "base64").toString(),
      ).not.toContain(secret.slice(4, 12));
      expect(value.cut).toBe("***…");
    } finally {
      await echo.close();
    }
  });

  // The routes' one declaration (functions/api/validate.ts): query, path and comma lists are
  // checked by hono-openapi validators before any handler runs.
  it("a manifest query of 1,500 comma-list entries, and one with `format` sent 800 times, are answered at once", async () => {
    const { status, body } = await answered(
      await target.request(`${T}/processes`, json({ models: ["openai/gpt-4.1"] }, reader)),
    );
    expect(status, JSON.stringify(body)).toBe(201);
    const id = String(body.processId);
    const list = Array.from({ length: 1_500 }, (_, i) => (i % 10 === 0 ? ` s${i} ` : `s${i}`)).join(",");
    const wide = await target.attack(
      `GET manifest ?with= of 1,500 entries (${list.length} chars, read token)`,
      async () =>
        answered(await target.request(`${T}/processes/${id}/manifest?with=${list}`, { token: reader })),
      (result) => `${result.status} ${String(result.body.code ?? "")}`,
    );
    expect(wide).toMatchObject({ status: 403, body: { code: "tool_not_allowed" } });
    const repeated = await target.attack(
      "GET manifest with `format` repeated 800 times (read token)",
      async () =>
        answered(
          await target.request(`${T}/processes/${id}/manifest?${"format=openai&".repeat(800)}`, {
            token: reader,
          }),
        ),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(repeated).toMatchObject({ status: 400, body: { code: "invalid_format" } });
  });

  it("400 requests with hostile trace and request-id headers are answered as plain ones: fresh ids, one log line each, no span", async () => {
    const spawned = await answered(
      await target.request(`${T}/processes`, json({ models: [], engineDefault: ["whoami"] }, reader)),
    );
    expect(spawned.status, JSON.stringify(spawned.body)).toBe(201);
    const mcp = `${T}/processes/${String(spawned.body.processId)}/mcp`;
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "whoami", arguments: {} },
    });
    // What a caller controls of a request's telemetry: its trace context and its request id.
    const hostile: Record<string, string>[] = [
      {
        traceparent: `00-${"f".repeat(4_000)}-00f067aa0ba902b7-01`,
        "x-request-id": `id <script>\t${"x".repeat(4_000)}`,
      },
      {
        traceparent: "00-00000000000000000000000000000000-0000000000000000-01",
        tracestate: "a=".repeat(2_000),
      },
      {
        traceparent: "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "x-request-id": "a".repeat(129),
      },
      { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x-request-id": "lb-7.ok" },
    ];
    const from = target.logs.length;
    const answers = await target.attack(
      "400 requests (MCP fast route and Hono) with 4 KB traceparent and x-request-id, zero and bad-version traces, 4 KB tracestate (read token)",
      () =>
        Promise.all(
          Array.from({ length: 400 }, async (_, i) => {
            const headers = hostile[i % hostile.length]!;
            const response =
              i % 2 === 0
                ? await target.request(mcp, {
                    method: "POST",
                    headers: {
                      ...headers,
                      "content-type": "application/json",
                      accept: "application/json, text/event-stream",
                    },
                    body: call,
                    token: reader,
                  })
                : await target.request(`${T}/tools`, { headers, token: reader });
            await response.arrayBuffer();
            return {
              status: response.status,
              id: response.headers.get("x-request-id"),
              sent: headers["x-request-id"],
            };
          }),
        ),
      (result) => [...new Set(result.map((one) => one.status))].join(", "),
    );
    expect(new Set(answers.map((one) => one.status))).toEqual(new Set([200]));
    for (const answer of answers) {
      // A sane caller id is kept; any other is replaced by a fresh UUID, never echoed.
      if (answer.sent === "lb-7.ok") expect(answer.id).toBe("lb-7.ok");
      else expect(answer.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    // One line per request, with the id it answered, once its body was sent; no SDK, so no trace.
    const routes = new Set([
      "/v1/tenants/:tenant/projects/:project/processes/:id/mcp",
      "/v1/tenants/:tenant/projects/:project/tools",
    ]);
    const ours = () =>
      target.logs
        .slice(from)
        .filter((line) => line.event === "http.request" && routes.has(String(line.route)));
    await expect.poll(() => ours().length).toBe(400);
    const lines = ours();
    expect(new Set(lines.map((line) => line.requestId))).toEqual(new Set(answers.map((one) => one.id)));
    expect(lines.filter((line) => line.traceId !== undefined)).toEqual([]);
  });

  it("path parameters of 8,000 characters and a JSON body of 8,000 unknown keys are refused by the validators", async () => {
    const long = "a".repeat(8_000);
    const path = await target.attack(
      "GET T/tools/{8,000-char name} (read token)",
      async () => answered(await target.request(`${T}/tools/${long}`, { token: reader })),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(path.status).toBe(400);
    const keys = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`k${i}`, i]));
    const body = await target.attack(
      "POST T/processes with 8,000 unknown keys (read token)",
      async () => answered(await target.request(`${T}/processes`, json(keys, reader))),
      (result) => `${result.status} ${String(result.body.code)}`,
    );
    expect(body.status).toBeGreaterThanOrEqual(400);
    expect(body.status).toBeLessThan(500);
  });
});
