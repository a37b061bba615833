import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import type { Logger } from "@vance/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import { docTool } from "./support/fixtures";

/**
 * Issue 14: `POST T/diagnostics/empty-response` (spec §13.2, API.md "Insights and
 * diagnostics") — the phantom candidates of an empty answer, once per requestId, one WARN line
 * per first report, and a webhook sink (a local server here) behind a dedup gate.
 */

let sink: Server;
let sinkUrl: string;
const posts: Record<string, unknown>[] = [];

beforeAll(async () => {
  sink = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      posts.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hooks/llm`;
});

afterAll(() => new Promise<void>((resolve) => sink.close(() => resolve())));

const stores: SqliteStateStore[] = [];
afterEach(() => {
  posts.length = 0;
  for (const store of stores.splice(0)) store.close();
});

/** An app whose state store runs on `clock`, with its WARN lines recorded and the webhook set. */
async function instance(clock: { t: number }, dataDir = mkdtempSync(join(tmpdir(), "vance-diag-"))) {
  const warnings: { event: string; fields: Record<string, unknown> }[] = [];
  const logger: Logger = {
    info: () => {},
    warn: (event, fields = {}) => warnings.push({ event, fields: { ...fields } }),
  };
  const state = new SqliteStateStore(join(dataDir, "state.sqlite"), { now: () => clock.t });
  stores.push(state);
  const made = await testApp({
    dataDir,
    state,
    logger,
    now: () => clock.t,
    env: { VANCE_DIAGNOSTIC_WEBHOOK_URL: sinkUrl, VANCE_DIAGNOSTIC_DEDUP_SECONDS: "600" },
  });
  const client = await projectClient(made.app);
  for (const name of ["doc_read", "file_read", "jira_search"])
    await client.putTool(name, docTool(`The ${name} tool.`));
  const diagnose = (body: unknown) => client.call("POST", "/diagnostics/empty-response", body);
  const llmLines = () => warnings.filter((line) => line.event === "llm.diagnostic");
  return { ...made, client, diagnose, llmLines, warnings };
}

describe("POST T/diagnostics/empty-response", () => {
  it("the spec's cases: user, prompt and context origins, blank, and length skipped", async () => {
    const { diagnose } = await instance({ t: Date.UTC(2025, 0, 1) });
    const user = await diagnose({
      requestId: "req-user",
      messages: [
        { role: "system", content: "You help with documents." },
        { role: "user", content: "Use file_read on notes.md please." },
      ],
      offeredTools: ["doc_read", "tool_list", "tool_description"],
    });
    expect(user.status).toBe(200);
    expect(user.body).toEqual({
      kind: "phantom",
      candidates: [{ name: "file_read", origin: "user" }],
      firstReport: true,
    });

    const prompt = await diagnose({
      requestId: "req-prompt",
      messages: [
        { role: "system", content: "Recipe: look tickets up with jira_search (JQL)." },
        { role: "user", content: "What is open for me?" },
      ],
      offeredTools: ["doc_read"],
    });
    expect(prompt.body).toMatchObject({
      kind: "phantom",
      candidates: [{ name: "jira_search", origin: "prompt" }],
    });

    const context = await diagnose({
      requestId: "req-context",
      messages: [
        { role: "user", content: "And the other file?" },
        { role: "assistant", content: "I used file_read on the first one." },
      ],
      offeredTools: ["doc_read"],
    });
    expect(context.body).toMatchObject({
      kind: "phantom",
      candidates: [{ name: "file_read", origin: "context" }],
    });

    const blank = await diagnose({
      requestId: "req-blank",
      messages: [{ role: "user", content: "Hello?" }],
      offeredTools: ["doc_read"],
    });
    expect(blank.body).toEqual({ kind: "blank", candidates: [], firstReport: true });

    const skipped = await diagnose({
      requestId: "req-length",
      messages: [{ role: "user", content: "file_read everything" }],
      offeredTools: ["doc_read"],
      finishReason: "length",
    });
    expect(skipped.body).toMatchObject({ kind: "skipped", candidates: [] });
  });

  it("the same requestId twice: one WARN line, and the second answers firstReport false", async () => {
    const { diagnose, llmLines } = await instance({ t: Date.UTC(2025, 0, 1) });
    const body = {
      requestId: "req-twice",
      messages: [{ role: "user", content: "file_read it" }],
      offeredTools: ["doc_read"],
      finishReason: "stop",
    };
    expect((await diagnose(body)).body).toMatchObject({ kind: "phantom", firstReport: true });
    expect((await diagnose(body)).body).toMatchObject({ kind: "phantom", firstReport: false });
    expect(llmLines()).toEqual([
      {
        event: "llm.diagnostic",
        fields: {
          tenant: "acme",
          project: "shop",
          requestId: "req-twice",
          kind: "phantom",
          candidates: [{ name: "file_read", origin: "user" }],
          offeredTools: 1,
          finishReason: "stop",
        },
      },
    ]);
  });

  it("a blank first report is logged too; a skipped one is not", async () => {
    const { diagnose, llmLines } = await instance({ t: Date.UTC(2025, 0, 1) });
    await diagnose({ requestId: "b", messages: [{ role: "user", content: "hi" }], offeredTools: [] });
    await diagnose({ requestId: "s", messages: [], offeredTools: [], finishReason: "length" });
    expect(llmLines().map((line) => line.fields.kind)).toEqual(["blank"]);
  });

  it("a length report leaves its requestId unused: the same call's later phantom report still fires", async () => {
    const { diagnose, llmLines, services } = await instance({ t: Date.UTC(2025, 0, 1) });
    const conversation = {
      messages: [{ role: "user", content: "file_read it" }],
      offeredTools: ["doc_read"],
    };
    const cut = await diagnose({ requestId: "req-retried", ...conversation, finishReason: "length" });
    expect(cut.body).toEqual({ kind: "skipped", candidates: [], firstReport: false });
    const empty = await diagnose({ requestId: "req-retried", ...conversation, finishReason: "stop" });
    expect(empty.body).toMatchObject({ kind: "phantom", firstReport: true });
    expect(llmLines().map((line) => line.fields.requestId)).toEqual(["req-retried"]);
    await services.diagnosticWebhook!.settled();
  });

  it("the webhook gets one post per tenant and candidate within the dedup window, and another after it", async () => {
    const clock = { t: Date.UTC(2025, 0, 1) };
    const { diagnose, services } = await instance(clock);
    const phantom = (requestId: string) => ({
      requestId,
      messages: [{ role: "user", content: "file_read the report" }],
      offeredTools: ["doc_read"],
    });
    await diagnose(phantom("r1"));
    await diagnose(phantom("r2"));
    await diagnose({ requestId: "r3", messages: [{ role: "user", content: "hi" }], offeredTools: [] });
    await services.diagnosticWebhook!.settled();
    expect(posts).toEqual([
      {
        event: "llm.diagnostic",
        kind: "phantom",
        tenant: "acme",
        project: "shop",
        requestId: "r1",
        candidates: [{ name: "file_read", origin: "user" }],
        at: "2025-01-01T00:00:00.000Z",
      },
    ]);

    clock.t += 601_000;
    await diagnose(phantom("r4"));
    await services.diagnosticWebhook!.settled();
    expect(posts.map((post) => post.requestId)).toEqual(["r1", "r4"]);
  });

  it("a sink that fails or hangs never fails or delays the answer", async () => {
    const dead = await testApp({
      env: { VANCE_DIAGNOSTIC_WEBHOOK_URL: "http://127.0.0.1:9/unreachable" },
    });
    const client = await projectClient(dead.app);
    await client.putTool("file_read", docTool("Reads files."));
    const res = await client.call("POST", "/diagnostics/empty-response", {
      requestId: "r",
      messages: [{ role: "user", content: "file_read" }],
      offeredTools: [],
    });
    expect(res.body).toMatchObject({ kind: "phantom", firstReport: true });
    await dead.services.diagnosticWebhook!.settled();
  });

  it("needs a read token of the tenant; a bad body is 422", async () => {
    const { app, diagnose } = await instance({ t: Date.UTC(2025, 0, 1) });
    const other = await app.request("/v1/tenants/acme/projects/shop/diagnostics/empty-response", {
      method: "POST",
      headers: {
        ...(await bearer({ tenant: "globex", roles: ["read"] })),
        "content-type": "application/json",
      },
      body: JSON.stringify({ requestId: "x", messages: [], offeredTools: [] }),
    });
    expect(other.status).toBe(403);
    const bad = await diagnose({ requestId: "", messages: [] });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_failed");
  });

  it("takes a conversation larger than the general 256 KiB body limit", async () => {
    const { diagnose } = await instance({ t: Date.UTC(2025, 0, 1) });
    const long = "lorem ipsum ".repeat(40_000);
    const res = await diagnose({
      requestId: "big",
      messages: [
        { role: "tool", content: long },
        { role: "user", content: "now file_read it" },
      ],
      offeredTools: [],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: "phantom" });
  });
});
