/**
 * The harness of the fast routes' parity tests (`functions/api/fast-*.test.ts`): the same request
 * sent to an app with its fast routes and to one without, in process (`app.request`, what Lambda's
 * adapter calls) and over `node:http` (what `npm start` serves), each answer read with the log
 * lines it wrote, and made comparable (a fresh request id and the time taken may differ; nothing
 * else may).
 */
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Logger } from "@vance/core";
import { expect } from "vitest";
import type { createApp } from "../../functions/api/app";
import { closeWhenBodyUnread } from "../../functions/api/keep-alive";

type App = ReturnType<typeof createApp>;

/** One answer: status, headers (all but `date` over the wire), body and the log lines it wrote. */
export interface Exchange {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly log: Record<string, unknown>[];
}

/** What a request is: its path, method, headers and body. */
export interface Sent {
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: Uint8Array<ArrayBuffer>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A logger keeping every line, and the servers to stop after the file. */
export class ParityHarness {
  readonly lines: Record<string, unknown>[] = [];
  readonly #stops: (() => Promise<void>)[] = [];
  readonly logger: Logger = {
    info: (event, fields) => this.lines.push({ event, ...fields }),
    warn: (event, fields) => this.lines.push({ event, ...fields }),
  };

  /** Serves `app` as `npm start` does (functions/api/node.ts); answers its base URL. */
  async listen(app: App): Promise<string> {
    const server = serve({ fetch: closeWhenBodyUnread(app.fetch), port: 0, hostname: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    this.#stops.push(() => new Promise((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.#stops.splice(0).map((stop) => stop()));
  }

  /** Sends through `app.request`, as Lambda's adapter calls `app.fetch`. */
  async inProcess(app: App, sent: Sent, env?: unknown): Promise<Exchange> {
    const from = this.lines.length;
    const response = await app.request(
      sent.path,
      {
        method: sent.method,
        headers: sent.headers,
        ...(sent.body === undefined ? {} : { body: sent.body }),
      },
      env,
    );
    const body = await response.text();
    await this.#logged(from);
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body,
      log: this.lines.slice(from),
    };
  }

  /** Sends over a keep-alive-less `node:http` request: the headers as they are written on the wire. */
  async overHttp(base: string, sent: Sent): Promise<Exchange> {
    const from = this.lines.length;
    const answer = await new Promise<{ status: number; headers: Record<string, string>; body: string }>(
      (resolve, reject) => {
        const req = httpRequest(
          `${base}${sent.path}`,
          { method: sent.method, headers: sent.headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => {
              const { date: _date, ...rest } = res.headers;
              resolve({
                status: res.statusCode ?? 0,
                headers: Object.fromEntries(
                  Object.entries(rest).map(([name, value]) => [name, String(value)]),
                ),
                body: Buffer.concat(chunks).toString("utf8"),
              });
            });
            res.on("error", reject);
          },
        );
        // A refusal before the body is read may close the socket while it is still being sent.
        req.on("error", (error: NodeJS.ErrnoException) => {
          if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
        });
        req.end(sent.body);
      },
    );
    await this.#logged(from);
    return { ...answer, log: this.lines.slice(from) };
  }

  /** The log line of an answer is written once its body has been sent. */
  async #logged(from: number): Promise<void> {
    await expect.poll(() => this.lines.slice(from).some((line) => line.event === "http.request")).toBe(true);
  }
}

/**
 * What may differ between two answers to the same request: a new request id (`sentId` undefined:
 * none was sent, or one the service replaces) and the time taken. Everything else is compared.
 */
export function comparable(exchange: Exchange, sentId: string | undefined): Exchange {
  const id = exchange.headers["x-request-id"]!;
  if (sentId === undefined) expect(id).toMatch(UUID);
  else expect(id).toBe(sentId);
  const fresh = (text: string) => text.replaceAll(id, "<request id>");
  return {
    status: exchange.status,
    headers: { ...exchange.headers, "x-request-id": fresh(id) },
    body: fresh(exchange.body),
    log: exchange.log.map(({ durationMs, requestId, ...line }) => {
      if (line.event === "http.request") expect(typeof durationMs).toBe("number");
      return { ...line, ...(requestId === undefined ? {} : { requestId: fresh(String(requestId)) }) };
    }),
  };
}

/** The answer's status and problem code as the table says, and one `http.request` line. */
export function expectAnswer(
  exchange: Exchange,
  expected: { readonly status: number; readonly code?: string; readonly contains?: string },
): void {
  expect(exchange.status).toBe(expected.status);
  if (expected.code !== undefined) expect(JSON.parse(exchange.body)).toMatchObject({ code: expected.code });
  if (expected.contains !== undefined) expect(exchange.body).toContain(expected.contains);
  expect(exchange.log.filter((line) => line.event === "http.request")).toHaveLength(1);
}
