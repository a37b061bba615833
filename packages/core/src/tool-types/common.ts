import * as v from "valibot";
import { TOOL_NAME_PATTERN } from "../ids";

/** The name of an MCP server document, mcp-servers/{server}.yaml. */
export const ServerNameSchema = v.pipe(
  v.string(),
  v.regex(
    TOOL_NAME_PATTERN,
    "server names are lowercase snake_case (the document mcp-servers/{server}.yaml)",
  ),
);

/** Any JSON Schema object (checked by use, not by shape). */
export const OpenJsonSchema = v.record(v.string(), v.unknown());
