import type { Logger } from "@vance/core";

/** One JSON line per event, as CloudWatch and local terminals both read well. */
export const jsonLogger: Logger = {
  info: (event, fields) => console.log(JSON.stringify({ level: "INFO", event, ...fields })),
  warn: (event, fields) => console.warn(JSON.stringify({ level: "WARN", event, ...fields })),
};
