/**
 * The byte floor of `bench/manifest.ts`, in its own process: a bare `node:http` server on
 * 127.0.0.1 answering `GET /{name}` with the bytes its parent registered under that name (as
 * `application/json` with a `content-length`, as the service answers a manifest). Nothing a
 * service can do answers those bytes faster over the same client.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** What the parent sends: the bytes to answer under a name (`/{name}`), or stop. */
export type FloorRequest =
  | { readonly name: string; readonly body: string }
  | { readonly cpu: number }
  | { readonly stop: true };
/** What this process answers: its port once listening, each registration's name, its CPU time (µs). */
export type FloorAnswer =
  | { readonly port: number }
  | { readonly registered: string }
  | { readonly cpu: number; readonly micros: number };

const bodies = new Map<string, Buffer>();
const server = createServer((request, response) => {
  const body = bodies.get(request.url?.slice(1) ?? "");
  if (!body) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  response.end(body);
});

process.on("message", (message: FloorRequest) => {
  if ("stop" in message) {
    server.close();
    server.closeAllConnections();
    process.disconnect();
    return;
  }
  if ("cpu" in message) {
    const used = process.cpuUsage();
    process.send?.({ cpu: message.cpu, micros: used.user + used.system } satisfies FloorAnswer);
    return;
  }
  bodies.set(message.name, Buffer.from(message.body, "utf8"));
  process.send?.({ registered: message.name } satisfies FloorAnswer);
});
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port } satisfies FloorAnswer);
});
