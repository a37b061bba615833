import type { BuiltInTool } from "../calls/built-in-tool";
import { executeJavascript } from "./execute-javascript";
import { META_TOOLS } from "./meta-tools";
import { whoami } from "./whoami";

export * from "../calls/built-in-tool";
export * from "./execute-javascript";
export * from "./meta-tools";
export * from "./tool-declarations";
export { whoami } from "./whoami";

/** Every built-in tool the service registers: the cascade's last layer (the capability floor's names are reserved). */
export const BUILT_IN_TOOLS: readonly BuiltInTool[] = [whoami, ...META_TOOLS, executeJavascript];
