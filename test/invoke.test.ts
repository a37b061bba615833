import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, testApp } from "./support/app";
import { ADD_NUMBERS } from "./support/spec-examples";

const T = "/v1/tenants/acme/projects/shop";

type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let headers: Record<string, string>;
let jira: Server;
let jiraUrl: string;
const jiraSeen: { url: string; auth: string | undefined }[] = [];

async function put(path: string, body: string, contentType = "application/yaml") {
  const res = await app.request(`${T}/${path}`, {
    method: "PUT",
    body,
    headers: { ...headers, "content-type": contentType },
  });
  if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

async function invoke(name: string, params: unknown, allowedTools?: string[]) {
  const res = await app.request(`${T}/tools/${name}/invoke`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ params, ...(allowedTools ? { allowedTools } : {}) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function scripted(source: string, inputs = "[]", timeoutMs = 1000) {
  return `type: scripted\ndescription: test script\nparameters:\n  timeoutMs: ${timeoutMs}\n  inputs: ${inputs}\n  source: ${JSON.stringify(source)}\n`;
}

beforeAll(async () => {
  jira = createServer((req, res) => {
    jiraSeen.push({ url: req.url ?? "", auth: req.headers.authorization });
    const match = /^\/rest\/api\/issue\/([A-Z]+-\d+)/.exec(req.url ?? "");
    if (!match) {
      res.writeHead(404, { "content-type": "text/plain" }).end("no such issue");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ key: match[1], summary: `Summary of ${match[1]}`, status: "In Progress", extra: 1 }),
    );
  });
  await new Promise<void>((resolve) => jira.listen(0, "127.0.0.1", resolve));
  jiraUrl = `http://127.0.0.1:${(jira.address() as AddressInfo).port}`;

  ({ app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } }));
  headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
  const stored = await app.request("/v1/tenants/acme/secrets/JIRA_TOKEN", {
    method: "PUT",
    headers: { ...(await bearer({ tenant: "acme", roles: ["admin"] })), "content-type": "application/json" },
    body: JSON.stringify({ value: "s3cr3t-jira" }),
  });
  expect(stored.status).toBe(204);

  await put("tools/add_numbers", ADD_NUMBERS);
  await put(
    "tools/jira_get_issue",
    `type: rest
description: Fetch a Jira issue.
parameters:
  url: ${jiraUrl}/rest/api/issue/{id}
  headers:
    Authorization: "Bearer \${secret:JIRA_TOKEN}"
  inputs:
    - { name: id, type: string }
`,
  );
  await put(
    "tools/jira_summary",
    `name: jira_summary
type: scripted
description: Summarise a Jira ticket via the configured 'jira_get_issue' tool.
parameters:
  inputs:
    - name: ticket
      type: string
      description: Jira ticket id, e.g. ABC-123
  scriptPath: scripts/jira_summary.js
`,
  );
  await put(
    "documents/scripts/jira_summary.js",
    `const issue = vance.tools.call("jira_get_issue", { id: ticket });
({ summary: issue.summary, status: issue.status })
`,
    "application/javascript",
  );
});

afterAll(async () => {
  await new Promise((resolve) => jira.close(resolve));
});

describe("POST …/tools/{name}/invoke", () => {
  it("runs the spec's add_numbers example", async () => {
    const { status, body } = await invoke("add_numbers", { a: 1, b: 2 });
    expect(status).toBe(200);
    expect(body.value).toBe(3);
    expect(typeof body.durationMs).toBe("number");
  });

  it("runs jira_summary from its scriptPath with a sibling rest call to a real server", async () => {
    const { body } = await invoke("jira_summary", { ticket: "ABC-123" });
    expect(body).toMatchObject({ value: { summary: "Summary of ABC-123", status: "In Progress" } });
    expect(jiraSeen.at(-1)).toEqual({ url: "/rest/api/issue/ABC-123", auth: "Bearer s3cr3t-jira" });
  });

  it("picks up an edited script document on the next invocation, without any reload", async () => {
    await put(
      "documents/scripts/jira_summary.js",
      `const issue = vance.tools.call("jira_get_issue", { id: ticket });\n\`\${issue.key}: \${issue.summary}\`\n`,
      "application/javascript",
    );
    const { body } = await invoke("jira_summary", { ticket: "XY-9" });
    expect(body.value).toBe("XY-9: Summary of XY-9");
    await put(
      "documents/scripts/jira_summary.js",
      `const issue = vance.tools.call("jira_get_issue", { id: ticket });\n({ summary: issue.summary, status: issue.status })\n`,
      "application/javascript",
    );
  });

  it("a sibling's upstream error throws inside the script and ends as the script's error", async () => {
    await put(
      "tools/jira_lower",
      scripted(
        'vance.tools.call("jira_get_issue", { id: "lower-case" })',
        "[{ name: x, type: string, required: false }]",
      ),
    );
    const { body } = await invoke("jira_lower", {});
    expect(body).toMatchObject({ error: "HttpError" });
    expect(String(body.message)).toContain("404");
    expect(String(body.message)).not.toContain("s3cr3t");
  });

  it("a script can catch a sibling's error", async () => {
    await put(
      "tools/jira_safe",
      scripted(
        'let r; try { vance.tools.call("jira_get_issue", { id: "nope" }); r = "ok" } catch (e) { r = e.name } r',
      ),
    );
    expect((await invoke("jira_safe", {})).body.value).toBe("HttpError");
  });

  it("checks params against the input schema before the tool runs (422 invalid_params)", async () => {
    const wrongType = await invoke("add_numbers", { a: "1", b: 2 });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body).toMatchObject({ code: "invalid_params", errors: [{ path: "a" }] });
    const missing = await invoke("add_numbers", { a: 1 });
    expect(missing.body).toMatchObject({ code: "invalid_params", errors: [{ path: "b" }] });
    const extra = await invoke("add_numbers", { a: 1, b: 2, c: 3 });
    expect(extra.status).toBe(422);
  });

  it("serialises a document tool's input schema once per version, not on each call", async () => {
    // The compiled schema is found by the schema's JSON text, computed when the document is read.
    const schemaOf = (input: string) => (value: unknown) =>
      typeof value === "object" &&
      value !== null &&
      input in ((value as { properties?: object }).properties ?? {});
    await put("tools/kiwi_sum", scripted("kiwiCount + 1", "[{ name: kiwiCount, type: number }]"));
    expect((await invoke("kiwi_sum", { kiwiCount: 1 })).body.value).toBe(2);
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      for (let n = 0; n < 20; n += 1) {
        expect((await invoke("kiwi_sum", { kiwiCount: n })).body.value).toBe(n + 1);
      }
      expect((await invoke("kiwi_sum", { kiwiCount: "one" })).status).toBe(422);
      expect(stringify.mock.calls.filter(([value]) => schemaOf("kiwiCount")(value))).toHaveLength(0);
      // A new version of the document is checked against its new schema.
      await put("tools/kiwi_sum", scripted("kiwiTotal + 2", "[{ name: kiwiTotal, type: number }]"));
      expect((await invoke("kiwi_sum", { kiwiCount: 1 })).status).toBe(422);
      stringify.mockClear();
      for (let n = 0; n < 20; n += 1) {
        expect((await invoke("kiwi_sum", { kiwiTotal: n })).body.value).toBe(n + 2);
      }
      expect(stringify.mock.calls.filter(([value]) => schemaOf("kiwiTotal")(value))).toHaveLength(0);
    } finally {
      stringify.mockRestore();
    }
  });

  it("answers 404 for unknown tools and 403 tool_not_allowed outside allowedTools", async () => {
    expect((await invoke("no_such_tool", {})).body).toMatchObject({ code: "tool_not_found" });
    const refused = await invoke("add_numbers", { a: 1, b: 2 }, ["jira_summary"]);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "tool_not_allowed" });
  });

  it("sibling calls obey the caller's allow set", async () => {
    const { body } = await invoke("jira_summary", { ticket: "ABC-1" }, ["jira_summary"]);
    expect(body).toMatchObject({ error: "ToolNotAllowed" });
    const allowed = await invoke("jira_summary", { ticket: "ABC-1" }, ["jira_summary", "jira_get_issue"]);
    expect(allowed.body).toMatchObject({ value: { summary: "Summary of ABC-1" } });
  });

  it("runs built-in tools and doc_lookup tools", async () => {
    expect((await invoke("whoami", {})).body.value).toEqual({
      tenant: "acme",
      project: "shop",
      processId: null,
      role: null,
    });
    const doc = await invoke("doc_getting_started", {});
    expect(String(doc.body.value)).toContain("# Getting started");
  });

  it("50 concurrent invocations with a sibling call all return correct results", async () => {
    const tickets = Array.from({ length: 50 }, (_, i) => `CON-${i}`);
    const results = await Promise.all(tickets.map((ticket) => invoke("jira_summary", { ticket })));
    expect(results.map((r) => (r.body.value as { summary: string }).summary)).toEqual(
      tickets.map((ticket) => `Summary of ${ticket}`),
    );
  });
});

describe("hostile scripts end with a clear error and the service keeps answering", () => {
  const cases: [string, string, string, RegExp][] = [
    ["an endless loop", "spin", "while(true){}", /TimeoutError/],
    [
      "a memory bomb",
      "bomb",
      "let a = []; while(true) { a.push('x'.repeat(1e5)) }",
      /MemoryError|InternalError|RangeError|TimeoutError/,
    ],
    ["deep recursion", "deep", "function f(n){ return f(n+1) + 1 } f(0)", /RangeError|InternalError/],
    ["require", "req", "require('fs')", /ReferenceError/],
    ["process", "proc", "process.env", /ReferenceError/],
    ["fetch", "fet", "fetch('http://127.0.0.1/')", /ReferenceError/],
    ["setTimeout", "tim", "setTimeout(() => 1, 1)", /ReferenceError/],
  ];
  it.each(cases)("%s", async (_label, name, source, error) => {
    await put(`tools/hostile_${name}`, scripted(source, "[]", 500));
    const { status, body } = await invoke(`hostile_${name}`, {});
    expect(status).toBe(200);
    expect(String(body.error)).toMatch(error);
    expect(typeof body.message).toBe("string");
    expect((await invoke("add_numbers", { a: 2, b: 3 })).body.value).toBe(5);
  });

  it("a script calling itself through vance.tools.call stops at the depth limit", async () => {
    await put("tools/ouroboros", scripted('vance.tools.call("ouroboros", {})', "[]", 5000));
    const { body } = await invoke("ouroboros", {});
    expect(body.error).toBe("CallDepthExceeded");
    expect(String(body.message)).toContain("ouroboros");
    expect((await invoke("add_numbers", { a: 2, b: 3 })).body.value).toBe(5);
  });
});
