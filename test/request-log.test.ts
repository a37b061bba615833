import { createInterface } from "node:readline";
import type { Logger } from "@vance/core";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { startLocalServer } from "./support/local-server";

type App = Awaited<ReturnType<typeof testApp>>["app"];
const lines: { event: string; fields: Record<string, unknown> }[] = [];
const logger: Logger = {
  info: (event, fields) => lines.push({ event, fields: { ...fields } }),
  warn: (event, fields) => lines.push({ event, fields: { ...fields } }),
};
let app: App;
let headers: Record<string, string>;

beforeAll(async () => {
  ({ app } = await testApp({ logger }));
  headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
});

/** The `http.request` lines written while `request` ran and its body was read. */
async function logged(request: () => Response | Promise<Response>) {
  const from = lines.length;
  const response = await request();
  const body = await response.text();
  const requests = lines.slice(from).filter((line) => line.event === "http.request");
  return { response, body, requests: requests.map((line) => line.fields) };
}

describe("request log", () => {
  it("writes one line per request: id, tenant, route template, status, duration and the body's bytes", async () => {
    const { response, body, requests } = await logged(() =>
      app.request("/v1/tenants/acme/projects/shop/tools", { headers }),
    );
    expect(response.status).toBe(200);
    expect(requests).toHaveLength(1);
    const [line] = requests;
    expect(line).toMatchObject({
      method: "GET",
      route: "/v1/tenants/:tenant/projects/:project/tools",
      tenant: "acme",
      status: 200,
      bytes: Buffer.byteLength(body),
    });
    expect(line?.durationMs).toEqual(expect.any(Number));
    expect(line?.requestId).toBe(response.headers.get("x-request-id"));
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps a sane incoming x-request-id and replaces one that is not", async () => {
    const kept = await logged(() =>
      app.request("/v1/health", { headers: { "x-request-id": "lb-1234.abc" } }),
    );
    expect(kept.response.headers.get("x-request-id")).toBe("lb-1234.abc");
    expect(kept.requests[0]?.requestId).toBe("lb-1234.abc");
    const replaced = await logged(() =>
      app.request("/v1/health", { headers: { "x-request-id": `bad id\u0001${"x".repeat(300)}` } }),
    );
    expect(replaced.response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("puts the request id inside every problem body, 404s of unknown routes and refusals included", async () => {
    for (const [path, status] of [
      ["/v1/nowhere", 404],
      ["/v1/tenants/acme/projects/shop/tools", 401],
      ["/v1/tenants/acme/projects/shop/tools/nope", 404],
    ] as const) {
      const { response, body, requests } = await logged(() =>
        app.request(path, path.endsWith("/tools") ? {} : { headers }),
      );
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      const problem = JSON.parse(body) as Record<string, unknown>;
      expect(problem.requestId).toBe(response.headers.get("x-request-id"));
      expect(requests).toEqual([expect.objectContaining({ status, requestId: problem.requestId })]);
    }
  });
});

describe("request log on the Node server (npm start)", () => {
  it("counts the bytes the server wrote, for JSON answers and problems alike", async () => {
    const server = await startLocalServer({ env: { VANCE_STORE_SCAN_SECONDS: "0" } });
    try {
      const seen: Record<string, unknown>[] = [];
      createInterface({ input: server.child.stdout! }).on("line", (line) => {
        if (line.includes('"http.request"')) seen.push(JSON.parse(line) as Record<string, unknown>);
      });
      const auth = { authorization: `Bearer ${server.token}` };
      const bodies = [
        await (await fetch(`${server.base}/v1/health`)).text(),
        await (await fetch(`${server.base}/v1/tenants/demo/projects/hello/tools`, { headers: auth })).text(),
        await (
          await fetch(`${server.base}/v1/tenants/demo/projects/hello/tools/nope`, { headers: auth })
        ).text(),
      ];
      await expect.poll(() => seen.length).toBeGreaterThanOrEqual(3);
      expect(seen.slice(-3).map((line) => [line.status, line.bytes])).toEqual([
        [200, Buffer.byteLength(bodies[0]!)],
        [200, Buffer.byteLength(bodies[1]!)],
        [404, Buffer.byteLength(bodies[2]!)],
      ]);
    } finally {
      await server.stop();
    }
  });
});
