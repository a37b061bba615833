import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BODY_BYTES as MAX_BODY_BYTES } from "../functions/api/body-limits";
import { closeWhenBodyUnread } from "../functions/api/keep-alive";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";

type ServerHandle = ReturnType<typeof serve>;

describe("keep-alive after early errors (a real @hono/node-server on 127.0.0.1, Node's fetch)", () => {
  let server: ServerHandle;
  let base: string;
  let headers: Record<string, string>;

  beforeAll(async () => {
    const { app } = await testApp();
    // As functions/api/node.ts serves it.
    server = serve({ fetch: closeWhenBodyUnread(app.fetch), port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/tenants/acme/projects/shop`;
    headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Sends one request on the shared keep-alive pool; a socket failure becomes its error code. */
  async function send(
    path: string,
    init: RequestInit,
  ): Promise<{ status: number; connection: string | null }> {
    try {
      const res = await fetch(`${base}${path}`, init);
      await res.arrayBuffer();
      return { status: res.status, connection: res.headers.get("connection") };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      return { status: 0, connection: cause?.code ?? String(error) };
    }
  }

  const followUp = (round: number) =>
    send(`/documents/notes/n${round}.md`, {
      method: "PUT",
      headers: { ...headers, "content-type": "text/markdown" },
      body: `# note ${round}`,
    });

  it("answers 20 oversized PUTs with 413 and every follow-up on the same client succeeds", async () => {
    const oversized = "x".repeat(MAX_BODY_BYTES + 64 * 1024);
    const early = [];
    const after = [];
    for (let round = 0; round < 20; round++) {
      early.push(
        await send("/documents/notes/big.md", {
          method: "PUT",
          headers: { ...headers, "content-type": "text/markdown" },
          body: oversized,
        }),
      );
      after.push(await followUp(round));
    }
    expect(early).toEqual(Array.from({ length: 20 }, () => ({ status: 413, connection: "close" })));
    expect(after.map((res) => res.status)).toEqual(Array.from({ length: 20 }, () => 201));
    // A request whose body was read keeps its connection.
    expect(after.every((res) => res.connection !== "close")).toBe(true);
  });

  it("counts a chunked body (no content-length) as it streams in: 413 over the limit, stored under it", async () => {
    const chunked = (size: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const chunk = new TextEncoder().encode("z".repeat(16 * 1024));
          for (let sent = 0; sent < size; sent += chunk.length) controller.enqueue(chunk);
          controller.close();
        },
      });
    const put = (size: number) =>
      send("/documents/notes/streamed.md", {
        method: "PUT",
        headers: { ...headers, "content-type": "text/markdown" },
        body: chunked(size),
        duplex: "half",
      } as RequestInit);
    expect((await put(MAX_BODY_BYTES + 64 * 1024)).status).toBe(413);
    expect((await put(64 * 1024)).status).toBe(201);
  });

  it("closes the connection after 415 and 401 answered before the body was read, and follow-ups succeed", async () => {
    const body = "y".repeat(128 * 1024);
    const early = [];
    const after = [];
    for (let round = 0; round < 10; round++) {
      early.push(
        await send("/documents/notes/wrong.md", {
          method: "PUT",
          headers: { ...headers, "content-type": "image/png" },
          body,
        }),
      );
      early.push(
        await send("/documents/notes/anon.md", {
          method: "PUT",
          headers: { "content-type": "text/markdown", authorization: "Bearer not-a-token" },
          body,
        }),
      );
      after.push(await followUp(100 + round));
    }
    expect(early.map((res) => `${res.status} ${res.connection}`)).toEqual(
      Array.from({ length: 10 }, () => ["415 close", "401 close"]).flat(),
    );
    expect(after.map((res) => res.status)).toEqual(Array.from({ length: 10 }, () => 201));
  });
});

describe("bodies that are not UTF-8 are refused, never altered", () => {
  const invalid = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"a":"\xff\xfe"}

  it("answers 400 invalid_json for a JSON request body with invalid UTF-8", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const res = await app.request(`${client.base}/processes`, {
      method: "POST",
      headers: { ...client.headers, "content-type": "application/json" },
      body: invalid,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_json");
  });

  it("answers 400 invalid_json for a JSON tool document and 400 invalid_body for YAML or text, storing nothing", async () => {
    const { app } = await testApp();
    const client = await projectClient(app);
    const put = (path: string, contentType: string) =>
      app.request(`${client.base}${path}`, {
        method: "PUT",
        headers: { ...client.headers, "content-type": contentType },
        body: invalid,
      });
    const json = await put("/tools/broken", "application/json");
    expect([json.status, ((await json.json()) as { code: string }).code]).toEqual([400, "invalid_json"]);
    const yaml = await put("/tools/broken", "application/yaml");
    expect([yaml.status, ((await yaml.json()) as { code: string }).code]).toEqual([400, "invalid_body"]);
    const text = await put("/documents/notes/broken.md", "text/markdown");
    expect([text.status, ((await text.json()) as { code: string }).code]).toEqual([400, "invalid_body"]);
    expect((await client.call("GET", "/documents/notes/broken.md")).status).toBe(404);
    expect((await client.call("GET", "/tools/broken")).status).toBe(404);
  });
});
