import { isSpanContextValid, trace } from "@opentelemetry/api";
import type { Logger } from "@vance/core";

export interface JsonLoggerOptions {
  /** Write TRACE lines (every name of a list an INFO line counts). */
  readonly trace?: boolean;
  /** One readable line per event instead of JSON, for a terminal (`npm start` on a TTY). */
  readonly pretty?: boolean;
  /** Where a line goes; by default `console.log`, WARN lines `console.warn`. */
  readonly write?: (line: string, level: LogLevel) => void;
}

export type LogLevel = "INFO" | "WARN" | "TRACE";

/**
 * One JSON line per event, as CloudWatch and local terminals both read well; with `pretty`, a
 * short human line instead. Every line written inside a traced request carries its `traceId`
 * (and `spanId`), so a log line leads to its trace. TRACE lines only when `trace` is asked for.
 */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const write = (level: LogLevel, event: string, fields?: Readonly<Record<string, unknown>>) => {
    const line = { level, event, ...traceFields(), ...fields };
    const text = options.pretty ? prettyLine(line) : JSON.stringify(line);
    if (options.write) options.write(text, level);
    else if (level === "WARN") console.warn(text);
    else console.log(text);
  };
  return {
    info: (event, fields) => write("INFO", event, fields),
    warn: (event, fields) => write("WARN", event, fields),
    ...(options.trace ? { trace: (event, fields) => write("TRACE", event, fields) } : {}),
  };
}

/** INFO and WARN lines, no TRACE. */
export const jsonLogger: Logger = createJsonLogger();

function traceFields(): { traceId?: string; spanId?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : {};
}

/**
 * `12:03:04.123 INFO  http.request GET /v1/… 200 4.2ms 512B  requestId=… traceId=…`: the
 * request line's own fields first, every other field as `key=value` (JSON for non-strings).
 */
function prettyLine(line: Readonly<Record<string, unknown>>): string {
  const { level, event, spanId: _spanId, ...rest } = line;
  const time = new Date().toISOString().slice(11, 23);
  const head = [time, String(level).padEnd(5), String(event)];
  if (event === "http.request") {
    const { method, route, path, status, durationMs, bytes, ...others } = rest;
    head.push(String(method), String(route ?? path), String(status), `${durationMs}ms`, `${bytes ?? "?"}B`);
    return [...head, ...pairs(others)].join(" ");
  }
  return [...head, ...pairs(rest)].join(" ");
}

function pairs(fields: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
}
