/**
 * The MCP client of every row of bench/mcp.ts, run as a child process of its own (one per row), so
 * that the client's CPU never shares a process with a server it measures: the MCP SDK's `Client`
 * over Streamable HTTP or the older HTTP+SSE transport, connected once, calling one echo tool.
 *
 * Started with `fork` and one argument, a JSON `ClientPlan`; it connects, then answers messages of
 * the parent: `{ calls: n }` → `{ times: number[] }` (ms per call, each answer checked to echo
 * "bench"), `{ close: true }` → exits. A failure is sent as `{ error }` and ends the process.
 */
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** What one row's client connects to and calls. */
export interface ClientPlan {
  readonly url: string;
  /** `streamable`: Streamable HTTP (2025-03-26 on); `sse`: the HTTP+SSE transport of 2024-11-05. */
  readonly transport: "streamable" | "sse";
  readonly tool: string;
  /** The call's arguments (default `{ message: "bench" }`, an echo's); its answer's text must say `bench`. */
  readonly arguments?: Readonly<Record<string, unknown>>;
  /** Sent with every request (a bearer token). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A message of the parent. */
export type ClientCommand = { readonly calls: number } | { readonly close: true };
/** A message to the parent. */
export type ClientReport =
  | { readonly ready: true; readonly protocolVersion: string | undefined }
  | { readonly times: readonly number[] }
  | { readonly error: string };

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? "{}") as ClientPlan;
  const send = (report: ClientReport) => process.send?.(report);
  const client = new Client({ name: "bench", version: "1.0.0" });
  const requestInit = { headers: { ...plan.headers } };
  const transport =
    plan.transport === "sse"
      ? new SSEClientTransport(new URL(plan.url), {
          requestInit,
          // The SSE stream is opened with a GET that `requestInit` does not reach.
          eventSourceInit: {
            fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...plan.headers } }),
          },
        })
      : new StreamableHTTPClientTransport(new URL(plan.url), { requestInit });
  await client.connect(transport);
  const once = async () => {
    const result = await client.callTool({
      name: plan.tool,
      arguments: { ...(plan.arguments ?? { message: "bench" }) },
    });
    const text = (result.content as { text?: unknown }[] | undefined)?.[0]?.text;
    if (typeof text !== "string" || !text.includes("bench")) {
      throw new Error(`unexpected answer ${JSON.stringify(result).slice(0, 300)}`);
    }
  };
  process.on("message", (command: ClientCommand) => {
    void (async () => {
      try {
        if ("close" in command) {
          await client.close();
          process.exit(0);
        }
        const times: number[] = [];
        for (let i = 0; i < command.calls; i++) {
          const started = performance.now();
          await once();
          times.push(performance.now() - started);
        }
        send({ times });
      } catch (error) {
        send({ error: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      }
    })();
  });
  send({
    ready: true,
    protocolVersion:
      transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined,
  });
}

main().catch((error: unknown) => {
  process.send?.({ error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
