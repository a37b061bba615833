import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JsonShapeLimits, jsonShapeProblem, McpFailure } from "@vance/core";

/**
 * What one MCP server may send this client. The SDK answers every server-to-client request with a
 * POST of its own and parses every message whole (zod over every key): a server could otherwise
 * make one call cost seconds of the serving thread (20,000 pings; 400,000 keys in 5 MB).
 */
export const MCP_TRAFFIC_LIMITS = {
  /** Server-to-client requests (`ping`, or the refused `sampling`/`elicitation`/`roots`) in one response stream. */
  maxServerRequests: 4,
  /** Characters of one JSON-RPC message (the guarded fetch also caps a whole answer's bytes). */
  maxMessageChars: 10 * 1024 * 1024,
  /** The shape of one message. */
  json: { maxDepth: 64, maxValues: 100_000 } satisfies JsonShapeLimits,
  /** `tools/list` pages one listing reads. */
  maxListPages: 50,
  /** Characters of one `nextCursor`. */
  maxCursorChars: 1024,
  /** Bytes of all `tools/list` answers of one listing. */
  maxListBytes: 8 * 1024 * 1024,
} as const;

/**
 * The traffic of one MCP connection, seen before the SDK sees it: every answer body is counted,
 * and each JSON-RPC message is checked for its size and shape, and whether it is a request of
 * the server's, by linear scans over its text. A message that breaks a rule never reaches the
 * SDK: the stream it came in fails and `onViolation` hears why (the connection then closes).
 */
export class McpTraffic {
  /** Bytes of answer bodies received so far. */
  bytes = 0;
  /** Server-to-client requests seen so far (all streams). */
  serverRequests = 0;
  /** The first rule broken, if any. */
  violation: McpFailure | undefined;
  onViolation: ((error: McpFailure) => void) | undefined;

  constructor(readonly limits: typeof MCP_TRAFFIC_LIMITS = MCP_TRAFFIC_LIMITS) {}

  /** `fetch` with every answer checked: JSON bodies whole, event streams event by event. */
  wrap(fetch: FetchLike): FetchLike {
    return async (url, init) => {
      const response = await fetch(url, init);
      const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (!response.body || !response.ok) return response;
      if (type === "text/event-stream") {
        return new Response(response.body.pipeThrough(this.eventStreamGuard()), {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      if (type !== "application/json") return response;
      const text = await response.text();
      this.bytes += text.length;
      const problem = this.messageProblem(text, { requests: 0 });
      if (problem) throw this.violate(problem);
      return new Response(text, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  /** A JSON answer's text, checked as `wrap` checks it; a broken rule throws (and is this connection's violation). */
  checkedText(text: string): string {
    this.bytes += text.length;
    const problem = this.messageProblem(text, { requests: 0 });
    if (problem) throw this.violate(problem);
    return text;
  }

  /**
   * A reader of one event stream's chunks, checked as `wrap` checks them: each chunk gives the
   * data of the message events it completes, all checked before any is handed on; a broken rule
   * throws (and is this connection's violation).
   */
  eventReader(): (chunk: Uint8Array) => string[] {
    const decoder = new TextDecoder();
    const events = new EventScanner();
    const stream = { requests: 0 };
    return (chunk) => {
      this.bytes += chunk.byteLength;
      const messages = events.push(decoder.decode(chunk, { stream: true }));
      for (const data of messages) {
        const problem = this.messageProblem(data, stream);
        if (problem) throw this.violate(problem);
      }
      if (events.pendingChars > this.limits.maxMessageChars) {
        throw this.violate(
          new McpFailure(
            "response_too_large",
            `the MCP server sent an event of more than ${this.limits.maxMessageChars} characters`,
          ),
        );
      }
      return messages;
    };
  }

  /** Why `text` (one JSON-RPC message or a batch) may not reach the SDK, or null. */
  private messageProblem(text: string, stream: { requests: number }): McpFailure | null {
    const limits = this.limits;
    if (text.length > limits.maxMessageChars) {
      return new McpFailure(
        "response_too_large",
        `the MCP server sent a message of ${text.length} characters; at most ${limits.maxMessageChars} are accepted`,
      );
    }
    const shape = jsonShapeProblem(text, limits.json);
    if (shape)
      return new McpFailure(
        "response_too_large",
        `the MCP server sent a message too complex to read: ${shape}`,
      );
    const requests = countRequests(text);
    this.serverRequests += requests;
    stream.requests += requests;
    if (stream.requests > limits.maxServerRequests) {
      return new McpFailure(
        "protocol",
        `the MCP server sent more than ${limits.maxServerRequests} requests of its own (ping, sampling, …) while answering one; this client answers at most ${limits.maxServerRequests}`,
      );
    }
    return null;
  }

  private violate(error: McpFailure): McpFailure {
    if (!this.violation) {
      this.violation = error;
      this.onViolation?.(error);
    }
    return error;
  }

  /** Passes an event stream's bytes on unchanged, but stops it before an event that breaks a rule. */
  private eventStreamGuard(): TransformStream<Uint8Array, Uint8Array> {
    const decoder = new TextDecoder();
    const events = new EventScanner();
    const stream = { requests: 0 };
    return new TransformStream({
      transform: (chunk, controller) => {
        this.bytes += chunk.byteLength;
        for (const data of events.push(decoder.decode(chunk, { stream: true }))) {
          const problem = this.messageProblem(data, stream);
          if (problem) {
            controller.error(this.violate(problem));
            return;
          }
        }
        if (events.pendingChars > this.limits.maxMessageChars) {
          controller.error(
            this.violate(
              new McpFailure(
                "response_too_large",
                `the MCP server sent an event of more than ${this.limits.maxMessageChars} characters`,
              ),
            ),
          );
          return;
        }
        controller.enqueue(chunk);
      },
    });
  }
}

/**
 * Splits server-sent events as they arrive (the WHATWG rules: lines end in LF, CR or CRLF, a blank
 * line ends an event, `data:` lines join with LF) and hands on the data of each message event —
 * those without an `event:` name or named `message`, the ones the SDK reads. Linear in the text.
 */
class EventScanner {
  private line = "";
  private data: string[] = [];
  private dataChars = 0;
  private eventName = "";
  private afterCr = false;

  /** Characters held for the event not yet ended. */
  get pendingChars(): number {
    return this.dataChars + this.line.length;
  }

  push(text: string): string[] {
    const done: string[] = [];
    // The LF of a CRLF whose CR ended the previous chunk's line ends nothing more.
    let start = this.afterCr && text.charCodeAt(0) === 10 ? 1 : 0;
    this.afterCr = false;
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      this.line += text.slice(start, i);
      this.endLine(done);
      if (code === 13 && text.charCodeAt(i + 1) === 10) i++;
      this.afterCr = code === 13 && i === text.length - 1;
      start = i + 1;
    }
    this.line += text.slice(start);
    return done;
  }

  private endLine(done: string[]): void {
    const line = this.line;
    this.line = "";
    if (line === "") {
      if (this.data.length > 0 && (this.eventName === "" || this.eventName === "message")) {
        done.push(this.data.join("\n"));
      }
      this.data = [];
      this.dataChars = 0;
      this.eventName = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.data.push(value);
      this.dataChars += value.length + 1;
    } else if (field === "event") {
      this.eventName = value;
    }
  }
}

/**
 * How many JSON-RPC requests a message text holds: objects at its top (or, for a batch, inside
 * its top-level array) with both a `method` and an `id` key. One pass, no value built.
 */
export function countRequests(text: string): number {
  let depth = 0;
  let batch = false;
  let requests = 0;
  let hasMethod = false;
  let hasId = false;
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      const start = i + 1;
      for (i++; i < text.length; i++) {
        const inner = text.charCodeAt(i);
        if (inner === 0x5c) i++;
        else if (inner === 0x22) break;
      }
      const messageLevel = batch ? 2 : 1;
      if (depth === messageLevel && isKeyAt(text, i + 1)) {
        const key = text.slice(start, i);
        if (key === "method") hasMethod = true;
        else if (key === "id") hasId = true;
      }
    } else if (code === 0x7b || code === 0x5b) {
      if (!started) {
        started = true;
        batch = code === 0x5b;
      }
      depth++;
      if (depth === (batch ? 2 : 1)) {
        hasMethod = false;
        hasId = false;
      }
    } else if (code === 0x7d || code === 0x5d) {
      if (depth === (batch ? 2 : 1) && code === 0x7d && hasMethod && hasId) requests++;
      depth--;
    }
  }
  return requests;
}

/** Whether the string that ended just before `at` is a key: a `:` follows, past blanks. */
function isKeyAt(text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x3a) return true;
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return false;
  }
  return false;
}
