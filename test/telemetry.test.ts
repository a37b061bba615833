import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createJsonLogger } from "@vance/adapters";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { asyncContextFrameOn } from "../functions/api/promise-context";
import { startTelemetry, type Telemetry } from "../functions/api/telemetry";
import { bearer, testApp } from "./support/app";
import { type McpTestServer, startMcpTestServer } from "./support/mcp-test-server";

const T = "/v1/tenants/acme/projects/shop";
const SECRET_VALUE = "s3cr3t-upstream-7c1d";
const PARAM_VALUE = "TICKET-4711-param";
const MCP_KEY = "mcp-key-2b9e77";

type App = Awaited<ReturnType<typeof testApp>>["app"];

/** One span as the OTLP/HTTP JSON exporter sends it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP receiver on 127.0.0.1: every span posted to `/v1/traces`. */
async function startReceiver() {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const metricBodies: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      if (req.url === "/v1/metrics") metricBodies.push(body);
      if (req.url === "/v1/traces") {
        bodies.push(body);
        const parsed = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of parsed.resourceSpans) {
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, spans, bodies, metricBodies, stop: () => new Promise((resolve) => server.close(resolve)) };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

/** `name (attribute tool)` lines, indented by depth: the tree under `root`. */
function tree(spans: readonly OtlpSpan[], root: OtlpSpan, depth = 0): string[] {
  const children = spans
    .filter((span) => span.parentSpanId === root.spanId && span.traceId === root.traceId)
    .sort((a, b) => a.name.localeCompare(b.name));
  return [`${"  ".repeat(depth)}${root.name}`, ...children.flatMap((child) => tree(spans, child, depth + 1))];
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let telemetry: Telemetry;
let upstream: Server;
const upstreamSeen: IncomingHttpHeaders[] = [];
let mcp: McpTestServer;
let app: App;
let headers: Record<string, string>;

async function put(path: string, body: string, contentType = "application/yaml") {
  const res = await app.request(`${T}/${path}`, {
    method: "PUT",
    body,
    headers: { ...headers, "content-type": contentType },
  });
  if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
}

/** Invokes a tool with an incoming `traceparent`; answers the trace's spans once exported. */
async function tracedInvoke(name: string, params: unknown) {
  const traceId = crypto.randomUUID().replaceAll("-", "");
  const parentId = "00f067aa0ba902b7";
  const res = await app.request(`${T}/tools/${name}/invoke`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", traceparent: `00-${traceId}-${parentId}-01` },
    body: JSON.stringify({ params }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  await telemetry.flush();
  const spans = receiver.spans.filter((span) => span.traceId === traceId);
  const root = spans.find((span) => span.parentSpanId === parentId);
  if (!root) throw new Error(`no span of trace ${traceId} under the incoming parent`);
  return { status: res.status, body, spans, root, traceId };
}

beforeAll(async () => {
  receiver = await startReceiver();
  telemetry = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, "test");
  upstream = createServer((req, res) => {
    upstreamSeen.push(req.headers);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ summary: "fine" }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  mcp = await startMcpTestServer();

  ({ app } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" }, logger: createJsonLogger() }));
  headers = await bearer({ tenant: "acme", roles: ["read", "write"] });
  const admin = await bearer({ tenant: "acme", roles: ["admin"] });
  for (const [name, value] of [
    ["UP_TOKEN", SECRET_VALUE],
    ["MCP_KEY", MCP_KEY],
  ]) {
    const stored = await app.request(`/v1/tenants/acme/secrets/${name}`, {
      method: "PUT",
      headers: { ...admin, "content-type": "application/json" },
      body: JSON.stringify({ value }),
    });
    expect(stored.status).toBe(204);
  }
  await put(
    "tools/ticket_get",
    `type: rest\ndescription: Fetch a ticket.\nparameters:\n  url: ${upstreamUrl}/tickets/{id}\n  headers:\n    Authorization: "Bearer \${secret:UP_TOKEN}"\n  inputs:\n    - { name: id, type: string }\n`,
  );
  await put(
    "tools/ticket_summary",
    `type: scripted\ndescription: Summarise a ticket.\nparameters:\n  inputs:\n    - { name: ticket, type: string }\n  source: ${JSON.stringify('vance.tools.call("ticket_get", { id: ticket }).summary')}\n`,
  );
  await put(
    "documents/mcp-servers/own.yaml",
    `url: ${mcp.url}\ntimeoutMs: 5000\nheaders:\n  X-Api-Key: \${secret:MCP_KEY}\n`,
  );
  await put(
    "tools/own",
    "type: mcp_server\ndescription: The test server's tools\nparameters:\n  server: own\n",
  );
});

afterAll(async () => {
  await telemetry?.shutdown();
  await mcp?.stop();
  await new Promise((resolve) => upstream?.close(resolve));
  await receiver?.stop();
});

describe("traces over OTLP/HTTP", () => {
  it("follows the request with promise hooks, or AsyncLocalStorage where that needs no async_hooks", () => {
    expect(telemetry.traces).toBe("otlp");
    expect(telemetry.context).toBe(asyncContextFrameOn() ? "async-local-storage" : "promise-hooks");
  });

  it("a scripted invoke: request, tool, its cascade read, validation, script run and sibling call with its upstream request", async () => {
    const { status, body, spans, root, traceId } = await tracedInvoke("ticket_summary", {
      ticket: PARAM_VALUE,
    });
    expect(status).toBe(200);
    expect(body.value).toBe("fine");
    expect(tree(spans, root)).toEqual([
      "POST /v1/tenants/:tenant/projects/:project/tools/:name/invoke",
      "  tool ticket_summary",
      "    cascade.resolve",
      "    schema.validate",
      "    script.run",
      // The sibling call runs while the script does: a child of its run, not beside it.
      "      tool ticket_get",
      "        cascade.resolve",
      "        http GET",
      "        schema.validate",
    ]);
    const tool = spans.find((span) => span.name === "tool ticket_summary")!;
    expect(attribute(tool, "vance.tenant")).toBe("acme");
    expect(attribute(tool, "vance.project")).toBe("shop");
    expect(attribute(tool, "vance.tool.type")).toBe("scripted");
    expect(attribute(tool, "vance.outcome")).toBe("ok");
    const sibling = spans.find((span) => span.name === "tool ticket_get")!;
    expect(attribute(sibling, "vance.tool.type")).toBe("rest");
    expect(attribute(sibling, "vance.nested")).toBe(true);
    // The upstream joined the trace: its traceparent names the http span as parent.
    const call = spans.find((span) => span.name === "http GET")!;
    expect(upstreamSeen.at(-1)?.traceparent).toBe(`00-${traceId}-${call.spanId}-01`);
    expect(root.kind).toBe(2);
    expect(attribute(root, "http.response.status_code")).toBe(200);
  });

  it("an mcp_server pack call: the tool's MCP request carries the traceparent to the server", async () => {
    const { status, body, spans, root, traceId } = await tracedInvoke("own__echo_header", {
      name: "traceparent",
    });
    expect(status).toBe(200);
    const tool = spans.find((span) => span.name === "tool own__echo_header")!;
    expect(attribute(tool, "vance.tool.type")).toBe("mcp_server");
    const posts = spans.filter((span) => span.name === "mcp POST");
    expect(posts.length).toBeGreaterThanOrEqual(1);
    expect(tree(spans, root).slice(0, 3)).toEqual([
      "POST /v1/tenants/:tenant/projects/:project/tools/:name/invoke",
      "  tool own__echo_header",
      "    cascade.resolve",
    ]);
    // The header the server saw on tools/call is the one of a span in this trace.
    const seen = JSON.stringify(body.value);
    const match = /00-([0-9a-f]{32})-([0-9a-f]{16})-01/.exec(seen);
    expect(match?.[1]).toBe(traceId);
    expect(posts.map((span) => span.spanId)).toContain(match?.[2]);
  });

  it("the request's log line carries its trace id", async () => {
    const written: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      written.push(String(line));
    });
    try {
      const { traceId } = await tracedInvoke("ticket_summary", { ticket: "B-2" });
      const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.find((line) => line.event === "http.request")).toMatchObject({
        level: "INFO",
        traceId,
        status: 200,
        route: "/v1/tenants/:tenant/projects/:project/tools/:name/invoke",
      });
    } finally {
      spy.mockRestore();
    }
  });

  it("no secret and no param value in any exported attribute", async () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const everything = receiver.bodies.join("\n");
    expect(everything).toContain("ticket_summary");
    for (const value of [SECRET_VALUE, PARAM_VALUE, MCP_KEY, "Bearer "]) {
      expect(everything).not.toContain(value);
    }
  });
});

/** One data point of an OTLP/HTTP JSON metrics export. */
interface OtlpPoint {
  attributes: { key: string; value: Record<string, unknown> }[];
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
}

/** The data points of metric `name` in the last export. */
function pointsOf(name: string): { attributes: Record<string, unknown>; value: number }[] {
  const last = JSON.parse(receiver.metricBodies.at(-1) ?? "{}") as {
    resourceMetrics?: {
      scopeMetrics: {
        metrics: {
          name: string;
          sum?: { dataPoints: OtlpPoint[] };
          histogram?: { dataPoints: OtlpPoint[] };
          gauge?: { dataPoints: OtlpPoint[] };
        }[];
      }[];
    }[];
  };
  const metrics = (last.resourceMetrics ?? []).flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  const metric = metrics.find((m) => m.name === name);
  const points = metric?.sum?.dataPoints ?? metric?.histogram?.dataPoints ?? metric?.gauge?.dataPoints ?? [];
  return points.map((point) => ({
    attributes: Object.fromEntries(point.attributes.map((a) => [a.key, Object.values(a.value)[0]])),
    value: Number(point.asInt ?? point.asDouble ?? point.count ?? 0),
  }));
}

describe("metrics over OTLP/HTTP", () => {
  it("counts tool calls by tenant, project, tool and outcome, and times them by type and upstream", async () => {
    await tracedInvoke("ticket_summary", { ticket: "A-1" });
    await telemetry.flush();
    const calls = pointsOf("vance.tool.calls");
    const summary = calls.find((p) => p.attributes["vance.tool"] === "ticket_summary");
    expect(summary?.attributes).toEqual({
      "vance.tenant": "acme",
      "vance.project": "shop",
      "vance.tool": "ticket_summary",
      "vance.outcome": "ok",
    });
    // Cumulative: every ticket_summary call of this file so far (three).
    expect(summary?.value).toBe(3);
    const durations = pointsOf("vance.tool.duration");
    expect(durations.find((p) => p.attributes["vance.tool.type"] === "rest")?.value).toBe(3);
    const upstream = pointsOf("vance.upstream.duration");
    expect(upstream.map((p) => p.attributes["vance.upstream"]).sort()).toEqual(["http", "mcp"]);
    expect(JSON.stringify(receiver.metricBodies)).not.toContain("A-1");
  });
});

describe("pack source health", () => {
  it("counts packs by source state, in /v1/metrics and as the vance.packs.sources gauge", async () => {
    // A port nothing listens on: the pack's source is unavailable.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await put("documents/mcp-servers/gone.yaml", `url: http://127.0.0.1:${port}/mcp\ntimeoutMs: 2000\n`);
    await put(
      "tools/gone",
      "type: mcp_server\ndescription: A server that is down\nparameters:\n  server: gone\n",
    );
    const listed = await app.request(`${T}/tools`, { headers });
    expect(listed.status).toBe(200);
    const { stalePacks } = (await listed.json()) as { stalePacks: { pack: string; status: string }[] };
    expect(stalePacks).toMatchObject([{ pack: "gone", status: "unavailable" }]);
    const platform = await bearer({ tenant: "*", roles: [] });
    const metrics = (await (await app.request("/v1/metrics", { headers: platform })).json()) as {
      packs: Record<string, number>;
    };
    expect(metrics.packs).toEqual({ current: 1, stale: 0, unavailable: 1, invalid: 0 });
    await telemetry.flush();
    const points = pointsOf("vance.packs.sources");
    expect(Object.fromEntries(points.map((p) => [p.attributes["vance.pack.state"], p.value]))).toEqual({
      current: 1,
      stale: 0,
      unavailable: 1,
      invalid: 0,
    });
  });
});

describe("CloudWatch EMF lines", () => {
  it("writes one line per data point, delta, with tenant and tool as properties rather than dimensions", async () => {
    const { MeterProvider, PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
    const { EmfMetricExporter, EMF_NAMESPACE } = await import("../functions/api/emf");
    const lines: string[] = [];
    const provider = new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new EmfMetricExporter((line) => lines.push(line)),
          exportIntervalMillis: 3_600_000,
        }),
      ],
    });
    const { ServiceMetrics } = await import("@vance/core");
    const measured = new ServiceMetrics(provider.getMeter("test"));
    const call = { tenant: "acme", project: "shop", tool: "t", type: "rest", outcome: "ok" };
    measured.toolCall(call, 10);
    measured.toolCall(call, 30);
    await provider.forceFlush();
    measured.toolCall(call, 5);
    await provider.forceFlush();
    await provider.shutdown();
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const counts = parsed
      .filter((line) => "vance.tool.calls" in line)
      .map((line) => line["vance.tool.calls"]);
    expect(counts).toEqual([2, 1]);
    const first = parsed.find((line) => "vance.tool.calls" in line) as {
      _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
    } & Record<string, unknown>;
    expect(first._aws.CloudWatchMetrics[0]?.Namespace).toBe(EMF_NAMESPACE);
    expect(first._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([["vance.outcome"]]);
    expect(first["vance.tenant"]).toBe("acme");
    const duration = parsed.find((line) => "vance.tool.duration" in line);
    expect(duration).toMatchObject({ "vance.tool.duration": 20, "vance.tool.duration.max": 30 });
  });
});
