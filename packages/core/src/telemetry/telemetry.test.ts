import { context, type Histogram, isSpanContextValid, TraceFlags, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import type { HttpExchangeAnswer } from "../ports/tool-runtime";
import { inSpan, type ServiceMetrics, serverSpanUnder, tracedExchange } from "./telemetry";

function answerWith(status: number): HttpExchangeAnswer {
  return {
    status,
    statusText: "",
    header: () => undefined,
    read: async () => {},
    text: async () => "",
    cancel: () => {},
  };
}

/** Metrics that keep what `upstreamDuration` records. */
function recording(): { metrics: ServiceMetrics; recorded: Record<string, unknown>[] } {
  const recorded: Record<string, unknown>[] = [];
  const upstreamDuration = {
    record: (_value: number, attributes?: Record<string, unknown>) => recorded.push(attributes ?? {}),
  } as unknown as Histogram;
  return { metrics: { upstreamDuration } as unknown as ServiceMetrics, recorded };
}

describe("tracedExchange without an SDK (untraced: the fast path)", () => {
  it("hands the request on as it came and records the upstream duration with its outcome", async () => {
    const sent: { url: string; headers: Record<string, string> }[] = [];
    const { metrics, recorded } = recording();
    const exchange = tracedExchange(
      async (url, request) => {
        sent.push({ url, headers: { ...request.headers } });
        return answerWith(sent.length === 1 ? 200 : 503);
      },
      "mcp",
      metrics,
    );
    const request = { method: "post", headers: { accept: "application/json" }, body: "{}" };
    expect((await exchange("http://127.0.0.1:9/mcp", request)).status).toBe(200);
    // Inside an untraced span (a call's, say) as well as outside any.
    const second = await inSpan("tool t", {}, () => exchange("http://127.0.0.1:9/mcp", request));
    expect(second.status).toBe(503);
    expect(sent).toEqual([
      { url: "http://127.0.0.1:9/mcp", headers: { accept: "application/json" } },
      { url: "http://127.0.0.1:9/mcp", headers: { accept: "application/json" } },
    ]);
    expect(recorded).toEqual([
      { "vance.upstream": "mcp", "server.address": "127.0.0.1:9", "vance.outcome": "ok" },
      { "vance.upstream": "mcp", "server.address": "127.0.0.1:9", "vance.outcome": "http_503" },
    ]);
  });

  it("rejects as the exchange does, recording nothing", async () => {
    const { metrics, recorded } = recording();
    const exchange = tracedExchange(
      async () => {
        throw new Error("ECONNREFUSED");
      },
      "mcp",
      metrics,
    );
    await expect(exchange("http://127.0.0.1:9/mcp", { method: "POST", headers: {} })).rejects.toThrow(
      "ECONNREFUSED",
    );
    expect(recorded).toEqual([]);
  });
});

describe("serverSpanUnder without an SDK", () => {
  it("makes no span for a request that names no trace", () => {
    expect(serverSpanUnder(context.active(), "POST")).toBeNull();
  });

  it("keeps an incoming trace: the span carries the caller's trace id", () => {
    const incoming = {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    };
    const span = serverSpanUnder(trace.setSpanContext(context.active(), incoming), "POST");
    expect(span).not.toBeNull();
    expect(isSpanContextValid(span!.spanContext())).toBe(true);
    expect(span!.spanContext().traceId).toBe(incoming.traceId);
  });
});
