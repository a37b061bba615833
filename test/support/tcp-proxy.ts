import { createConnection, createServer, type Socket } from "node:net";

/** A TCP proxy in front of one server, which a test can make lose traffic. */
export interface TcpProxy {
  /** `http://127.0.0.1:{port}` of the proxy. */
  readonly endpoint: string;
  /**
   * Loses every byte in both directions for `ms`: requests never reach the server, answers to
   * requests it already took never reach the client (applied, answer lost). A connection that
   * lost bytes stays a black hole until its client gives up on it, since its HTTP stream is cut
   * mid-message. Resolves when the drop ends.
   */
  drop(ms: number): Promise<void>;
  /** Connections accepted so far (for tests that count them). */
  readonly connections: number;
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port in front of `target` (`http://host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  let droppingUntil = 0;
  let accepted = 0;
  const sockets = new Set<Socket>();
  const dropping = () => Date.now() < droppingUntil;
  const server = createServer((client) => {
    accepted++;
    const upstream = createConnection({ host: hostname, port: Number(port) });
    let cut = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    const relay = (from: Socket, to: Socket) => {
      from.on("data", (chunk: Buffer) => {
        if (dropping()) cut = true;
        if (!cut) to.write(chunk);
      });
      from.on("close", () => to.destroy());
    };
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const proxyPort = typeof address === "object" && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${proxyPort}`,
    get connections() {
      return accepted;
    },
    async drop(ms) {
      droppingUntil = Date.now() + ms;
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
