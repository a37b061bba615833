import {
  createVanceClient,
  isIdempotent,
  type ProblemCode,
  retryingFetch,
  VanceApiError,
} from "@vance/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceHost, serveService } from "./support/engine-host";
import { docTool } from "./support/fixtures";
import { freePort } from "./support/local-server";

/** `@vance/client` against the service on 127.0.0.1, and its retry rule against a scripted `fetch`. */

let service: ServiceHost;
beforeAll(async () => {
  service = await serveService();
});
afterAll(async () => {
  await service?.close();
});

describe("@vance/client against the service", () => {
  it("answers typed data, and a problem as VanceApiError with the document's code", async () => {
    let asked = 0;
    const client = createVanceClient({
      baseUrl: `${service.base}/`,
      token: async () => {
        asked++;
        return service.token;
      },
    });
    const project = client.project("acme", "client");
    await project.putTool(
      "add_numbers",
      "type: scripted\ndescription: Adds.\nparameters:\n  inputs: []\n  source: 1 + 2\n",
    );
    const view = await project.tool("add_numbers");
    expect(view).toMatchObject({ name: "add_numbers", layer: "project", config: { type: "scripted" } });
    const error = await project.tool("nope").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VanceApiError);
    expect(error).toMatchObject({ status: 404, code: "tool_not_found" });
    expect(String((error as Error).message)).toContain("GET tool nope");
    expect(asked).toBe(3); // the token function is asked before every request
    const { data } = await client.api.GET("/v1/health");
    expect(data?.status).toBe("ok");
  });

  it("a bad token is a 401 unauthenticated; a service that is not there is `unreachable`", async () => {
    const client = createVanceClient({ baseUrl: service.base, token: "not-a-token" });
    await expect(client.project("acme", "client").tool("x")).rejects.toMatchObject({
      status: 401,
      code: "unauthenticated",
    });
    const port = await freePort();
    const nowhere = createVanceClient({
      baseUrl: `http://127.0.0.1:${port}`,
      token: "t",
      retry: { attempts: 1 },
    });
    await expect(nowhere.project("acme", "client").tool("x")).rejects.toMatchObject({
      status: 0,
      code: "unreachable",
    });
  });

  it("asks a process's name lists only when they changed (?names=), and answers them whole every time", async () => {
    const sent: { url: URL; lists: boolean }[] = [];
    const client = createVanceClient({
      baseUrl: service.base,
      token: service.token,
      fetch: async (request) => {
        const response = await fetch(request);
        const url = new URL(request.url);
        if (url.pathname.endsWith("/manifest")) {
          const body = (await response.clone().json()) as Record<string, unknown>;
          sent.push({ url, lists: "deferred" in body && "demoted" in body });
        }
        return response;
      },
    });
    const project = client.project("acme", "names");
    // Thirty: a surface this small keeps a few tools all primary.
    const names = Array.from({ length: 30 }, (_, i) => `later_${String(i).padStart(2, "0")}`);
    for (const name of names) {
      await project.putTool(name, docTool(`Deferred ${name}.`, "primary: false\nlabels: [later]\n"));
    }
    const { processId } = await project.spawn({ allowedToolsAdd: ["@later"], models: [] });
    const first = await project.manifest(processId);
    expect(first.deferred).toEqual(names);
    const second = await project.manifest(processId);
    expect(second).toEqual(first);
    expect(sent.map(({ url, lists }) => [url.searchParams.get("names"), lists])).toEqual([
      [null, true],
      [first.namesVersion, false],
    ]);

    // tool_description activates a deferred tool: the lists change, and come whole with a new version.
    await project.invoke(processId, "tool_description", { names: ["later_07"] });
    const third = await project.manifest(processId);
    expect(third.primary).toContain("later_07");
    expect(third.deferred).toEqual(names.filter((name) => name !== "later_07"));
    expect(third.namesVersion).not.toBe(first.namesVersion);
    expect(sent.at(-1)).toMatchObject({ lists: true });
    expect(sent.at(-1)?.url.searchParams.get("names")).toBe(first.namesVersion);
    expect(await project.manifest(processId, { format: "anthropic" })).toMatchObject({
      deferred: third.deferred,
      demoted: third.demoted,
    });
    expect(sent.at(-1)).toMatchObject({ lists: false });

    // A caller that does not send the version gets the lists, as before.
    const { data } = await client.api.GET("/v1/tenants/{tenant}/projects/{project}/processes/{id}/manifest", {
      params: { path: { tenant: "acme", project: "names", id: processId } },
    });
    expect(data?.deferred).toEqual(third.deferred);
    expect(data?.demoted).toEqual(third.demoted);
  });

  it("end() ends a process: its place under the live cap is given back, its record is gone, a second end resolves, other problems throw", async () => {
    const capped = await serveService({ VANCE_QUOTA_LIVE_PROCESSES: "2" });
    try {
      const project = createVanceClient({
        baseUrl: capped.base,
        token: capped.token,
        // The default retries: a 429 quota_exceeded is not sent again.
      }).project("acme", "ends");
      const first = await project.spawn({ models: [] });
      const second = await project.spawn({ models: [] });
      await expect(project.spawn({ models: [] })).rejects.toMatchObject({
        status: 429,
        code: "quota_exceeded",
      });

      // A token the service refuses is a VanceApiError, and the process lives on.
      const refused = createVanceClient({ baseUrl: capped.base, token: "not-a-token" });
      await expect(refused.project("acme", "ends").end(first.processId)).rejects.toMatchObject({
        status: 401,
        code: "unauthenticated",
      });
      expect((await project.process(first.processId)).processId).toBe(first.processId);

      await expect(project.end(first.processId)).resolves.toBeUndefined();
      await expect(project.process(first.processId)).rejects.toMatchObject({
        status: 404,
        code: "process_not_found",
      });
      // Ended already: the caller is told nothing went wrong.
      await expect(project.end(first.processId)).resolves.toBeUndefined();
      expect(capped.callsTo(`/processes/${first.processId}`, "DELETE").map((call) => call.status)).toEqual([
        401, 204, 404,
      ]);

      const third = await project.spawn({ models: [] });
      expect(third.processId).not.toBe(first.processId);
      await expect(project.spawn({ models: [] })).rejects.toMatchObject({ code: "quota_exceeded" });
      expect((await project.process(second.processId)).processId).toBe(second.processId);
    } finally {
      await capped.close();
    }
  });

  it("types problem codes as the union the document declares", () => {
    const known: ProblemCode = "budget_floor_exceeded";
    // @ts-expect-error a code no route declares is not a ProblemCode
    const unknown: ProblemCode = "no_such_code";
    expect([known, unknown]).toHaveLength(2);
  });
});

describe("retries only where the request is idempotent", () => {
  /** A `fetch` answering the statuses in turn (`error`: a network failure), counting requests. */
  function scripted(answers: (number | "error")[], headers: Record<string, string> = {}, body = "{}") {
    const seen: string[] = [];
    const fetchOnce = async (request: Request) => {
      seen.push(`${request.method} ${new URL(request.url).pathname} ${await request.text()}`);
      const next = answers.shift() ?? 200;
      if (next === "error") throw new TypeError("fetch failed");
      return new Response(body, { status: next, headers });
    };
    return { fetchOnce, seen };
  }
  const waits: number[] = [];
  const policy = { sleep: async (ms: number) => void waits.push(ms) };
  const T = "http://x/v1/tenants/acme/projects/shop";

  it("a GET is sent again after 503s and network errors, with the same request each time", async () => {
    const { fetchOnce, seen } = scripted([503, "error", 200]);
    const response = await retryingFetch(fetchOnce, policy)(new Request(`${T}/processes/p1/manifest`));
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(3);
  });

  it("a process invoke is never repeated after a 503 or a failure, but is after 429 busy (nothing ran)", async () => {
    const body = JSON.stringify({ name: "greet", params: {} });
    const post = () => new Request(`${T}/processes/p1/invoke`, { method: "POST", body });
    const unavailable = scripted([503]);
    expect((await retryingFetch(unavailable.fetchOnce, policy)(post())).status).toBe(503);
    expect(unavailable.seen).toHaveLength(1);
    const failing = scripted(["error"]);
    await expect(retryingFetch(failing.fetchOnce, policy)(post())).rejects.toThrow("fetch failed");
    expect(failing.seen).toHaveLength(1);
    const busy = scripted([429, 200], { "retry-after": "1" });
    expect((await retryingFetch(busy.fetchOnce, policy)(post())).status).toBe(200);
    const sent = `POST /v1/tenants/acme/projects/shop/processes/p1/invoke ${body}`;
    expect(busy.seen).toEqual([sent, sent]); // the body intact the second time
  });

  it("a 429 quota_exceeded is answered at once: waiting seconds frees no quota", async () => {
    const problem = JSON.stringify({ status: 429, code: "quota_exceeded", detail: "live processes" });
    const spent = scripted([429, 201], { "retry-after": "1" }, problem);
    const response = await retryingFetch(
      spent.fetchOnce,
      policy,
    )(new Request(`${T}/processes`, { method: "POST" }));
    expect(response.status).toBe(429);
    expect(await response.json()).toMatchObject({ code: "quota_exceeded" });
    expect(spent.seen).toHaveLength(1);
    const busy = scripted([429, 201], { "retry-after": "1" }, JSON.stringify({ status: 429, code: "busy" }));
    expect(
      (await retryingFetch(busy.fetchOnce, policy)(new Request(`${T}/processes`, { method: "POST" }))).status,
    ).toBe(201);
    expect(busy.seen).toHaveLength(2);
  });

  it("waits Retry-After, bounded, and gives up after the attempts", async () => {
    waits.length = 0;
    const { fetchOnce, seen } = scripted([503, 503, 503, 503], { "retry-after": "60" });
    const response = await retryingFetch(fetchOnce, { ...policy, attempts: 3, maxDelayMs: 2000 })(
      new Request(`${T}/tools/x`),
    );
    expect(response.status).toBe(503);
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([2000, 2000]);
  });

  it("names the idempotent POSTs: resolution, the empty-response report, a limit report — not spawn or invoke", () => {
    expect(isIdempotent("POST", "/v1/tenants/a/projects/b/recipes/resolve")).toBe(true);
    expect(isIdempotent("POST", "/v1/tenants/a/projects/b/diagnostics/empty-response")).toBe(true);
    expect(isIdempotent("POST", "/v1/models/observed-limits")).toBe(true);
    expect(isIdempotent("POST", "/v1/tenants/a/projects/b/processes")).toBe(false);
    expect(isIdempotent("POST", "/v1/tenants/a/projects/b/processes/p/invoke")).toBe(false);
    expect(isIdempotent("POST", "/v1/tenants/a/projects/b/tools/x/invoke")).toBe(false);
    expect(isIdempotent("DELETE", "/v1/tenants/a/projects/b/tools/x")).toBe(true);
  });
});
