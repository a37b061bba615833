import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a fake endpoint received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

/** What a fake endpoint answers: a JSON body (or raw text) with a status, after an optional delay. */
export interface FakeAnswer {
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly delayMs?: number;
}

/**
 * A local HTTP server standing in for a model endpoint (OpenAI chat completions or Anthropic
 * Messages) on 127.0.0.1: it records every request and answers what `answer` says for it.
 */
export async function fakeLlmEndpoint(answer: (request: ReceivedRequest) => FakeAnswer) {
  const requests: ReceivedRequest[] = [];
  let abandoned = 0;
  let respond = answer;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const received: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
      requests.push(received);
      const reply = respond(received);
      const send = () => {
        if (res.destroyed) return;
        const body = reply.text ?? JSON.stringify(reply.json ?? {});
        res.writeHead(reply.status ?? 200, {
          "content-type": reply.text === undefined ? "application/json" : "text/plain",
        });
        res.end(body);
      };
      if (!reply.delayMs) return send();
      const timer = setTimeout(send, reply.delayMs);
      res.on("close", () => {
        if (res.writableFinished) return;
        clearTimeout(timer);
        abandoned++;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** The API root to put in the catalog's `baseUrl`. */
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Requests whose client hung up before the (delayed) answer was sent. */
    abandoned: () => abandoned,
    /** Replaces what the endpoint answers from now on. */
    answer(next: (request: ReceivedRequest) => FakeAnswer) {
      respond = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An OpenAI chat completion answering `content`. */
export function openAiCompletion(content: string | null, finishReason = "stop") {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finishReason }],
  };
}

/** An Anthropic Messages answer with one text block. */
export function anthropicMessage(text: string, stopReason = "end_turn") {
  return {
    id: "msg_test",
    type: "message",
    role: "assistant",
    content: [{ type: "text", text }],
    stop_reason: stopReason,
  };
}
