/**
 * The load client of `bench/manifest.ts`, in its own process: the same client for every row, so
 * its own cost (parsing answers, keeping sockets) falls on the service and on the byte floor alike,
 * and never on the server's event loop. Its parent sends a {@link LoadRequest}; it runs
 * `concurrency` loops of `GET url` over keep-alive `node:http` sockets for `ms` and answers a
 * {@link LoadAnswer}. Every answer must be a 200; the bytes of the answers are reported, so the
 * parent can check that the floor served what the service did.
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";

/** What the parent sends: one measurement window. */
export interface LoadRequest {
  readonly id: number;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly ms: number;
  readonly concurrency: number;
}

/** What this process answers for a window. */
export type LoadAnswer =
  | {
      readonly id: number;
      readonly requests: number;
      readonly elapsedMs: number;
      readonly latencies: readonly number[];
      /** Body bytes of the last answer. */
      readonly bytes: number;
    }
  | { readonly id: number; readonly error: string };

/** One keep-alive agent per origin, kept across windows: a window starts on warm sockets. */
const agents = new Map<string, Agent>();

function agentFor(url: URL, concurrency: number): Agent {
  let agent = agents.get(url.origin);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    agents.set(url.origin, agent);
  }
  return agent;
}

/**
 * One GET. A kept socket the server closed just as it was reused (the keep-alive race: a window
 * comes back to an origin after the others' windows) is sent again once on a fresh one.
 */
function get(
  url: URL,
  agent: Agent,
  headers: Readonly<Record<string, string>>,
  retry = true,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "GET", agent, headers }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on("error", reject);
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (retry && req.reusedSocket && error.code === "ECONNRESET") {
        get(url, agent, headers, false).then(resolve, reject);
      } else reject(error);
    });
    req.end();
  });
}

async function window(load: LoadRequest): Promise<LoadAnswer> {
  const url = new URL(load.url);
  const agent = agentFor(url, load.concurrency);
  const latencies: number[] = [];
  let bytes = 0;
  const started = performance.now();
  const deadline = started + load.ms;
  const loop = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const res = await get(url, agent, load.headers);
      if (res.status !== 200) throw new Error(`GET ${url.pathname}: ${res.status}`);
      latencies.push(performance.now() - sent);
      bytes = res.bytes;
    }
  };
  await Promise.all(Array.from({ length: load.concurrency }, loop));
  return {
    id: load.id,
    requests: latencies.length,
    elapsedMs: performance.now() - started,
    latencies,
    bytes,
  };
}

process.on("message", (load: LoadRequest | { readonly stop: true }) => {
  if ("stop" in load) {
    for (const agent of agents.values()) agent.destroy();
    process.disconnect();
    return;
  }
  window(load).then(
    (answer) => process.send?.(answer),
    (error: unknown) => process.send?.({ id: load.id, error: String(error) }),
  );
});
process.send?.({ ready: true });
