import type { Logger } from "@vance/core";

/**
 * One JSON line per event, as CloudWatch and local terminals both read well. TRACE lines (every
 * name of a list an INFO line counts) are written only when `trace` is asked for.
 */
export function createJsonLogger(options: { readonly trace?: boolean } = {}): Logger {
  return {
    info: (event, fields) => console.log(JSON.stringify({ level: "INFO", event, ...fields })),
    warn: (event, fields) => console.warn(JSON.stringify({ level: "WARN", event, ...fields })),
    ...(options.trace
      ? { trace: (event, fields) => console.log(JSON.stringify({ level: "TRACE", event, ...fields })) }
      : {}),
  };
}

/** INFO and WARN lines, no TRACE. */
export const jsonLogger: Logger = createJsonLogger();
