import * as v from "valibot";
import { type ParsedYaml, parseYamlDocument } from "../config/yaml";
import { Errors, type FieldError, type VanceError } from "../errors";
import { SECRET_NAME_PATTERN } from "../ids";
import { bareHost, isIpLiteral } from "../net/network-policy";
import { ServerNameSchema } from "./common";
import { secretNames } from "./rest/templates";
import type { ToolTypeEnvironment } from "./tool-type";

/** The folder of MCP server connections in every layer (API.md); documents in it are validated on write. */
export const MCP_SERVER_DOCUMENTS_DIR = "mcp-servers/";

/** The timeout of one MCP request when the document sets none (API.md). */
export const DEFAULT_MCP_TIMEOUT_MS = 10_000;

/** An HTTP field name (RFC 9110 `token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values are one line of visible characters, spaces and tabs. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * Headers the Streamable HTTP transport sets itself: a document that set them would break the
 * session or the content negotiation, so they are refused rather than silently overridden.
 */
const TRANSPORT_HEADERS = new Set([
  "accept",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding",
]);

/** The document `mcp-servers/{name}.yaml`: where a server is and how to reach it. */
export const McpServerDocumentSchema = v.strictObject({
  url: v.pipe(
    v.string("url must be a string"),
    v.check(
      (url) => /^https?:\/\/\S+$/i.test(url) && parseHttpUrl(url) !== null,
      "url must be an absolute http(s) URL (the server's Streamable HTTP endpoint)",
    ),
  ),
  headers: v.optional(
    v.record(
      v.pipe(
        v.string(),
        v.regex(HEADER_NAME, "header names are HTTP tokens (letters, digits and !#$%&'*+.^_`|~-)"),
        v.check(
          (name) => !TRANSPORT_HEADERS.has(name.toLowerCase()),
          (issue) =>
            `the header '${String(issue.input)}' is set by the MCP transport and cannot be configured`,
        ),
      ),
      v.pipe(
        v.string("header values are strings"),
        v.regex(HEADER_VALUE, "header values are one line without control characters"),
      ),
    ),
    {},
  ),
  timeoutMs: v.optional(
    v.pipe(
      v.number("timeoutMs must be a number"),
      v.integer("timeoutMs must be an integer"),
      v.minValue(100, "timeoutMs must be at least 100"),
      v.maxValue(120_000, "timeoutMs must be at most 120000"),
    ),
    DEFAULT_MCP_TIMEOUT_MS,
  ),
});

/** An MCP server document as validated (defaults filled). */
export type McpServerDocument = v.InferOutput<typeof McpServerDocumentSchema>;

export type McpServerDocumentResult =
  | { readonly ok: true; readonly server: McpServerDocument }
  | { readonly ok: false; readonly error: VanceError };

/** The document path of an MCP server connection. */
export function mcpServerDocumentPath(server: string): string {
  return `${MCP_SERVER_DOCUMENTS_DIR}${server}.yaml`;
}

/** Whether a document path lies in the MCP server folder, so a write of it is validated as one. */
export function isMcpServerDocumentPath(path: string): boolean {
  return path.startsWith(MCP_SERVER_DOCUMENTS_DIR);
}

/** The server name a document path stands for (`mcp-servers/{name}.yaml`, a valid server name), or null. */
export function mcpServerNameFromPath(path: string): string | null {
  if (!isMcpServerDocumentPath(path) || !path.endsWith(".yaml")) return null;
  const name = path.slice(MCP_SERVER_DOCUMENTS_DIR.length, -".yaml".length);
  return v.is(ServerNameSchema, name) ? name : null;
}

/**
 * Parses and validates an MCP server document (`mcp-servers/{name}.yaml`): YAML syntax, the
 * schema, secret names in header values, and a literal IP in `url` against the network policy
 * (host names are judged when they resolve, at connect time). Errors carry YAML line numbers.
 *
 * @example parseMcpServerDocument("url: https://mcp.example.com/mcp\n", env) // { ok: true, server: { url, headers: {}, timeoutMs: 10000 } }
 */
export function parseMcpServerDocument(
  text: string,
  environment: Pick<ToolTypeEnvironment, "networkPolicy">,
): McpServerDocumentResult {
  const result = parseYamlDocument(text, McpServerDocumentSchema, {
    document: "an MCP server document",
    schema: "the MCP server schema",
    mapping: "expected a mapping with url, headers and timeoutMs",
  });
  if (!result.ok) return fail(Errors.validationFailed(result.message, result.errors));
  const problems = checks(result.value, environment, result.yaml);
  if (problems.length > 0)
    return fail(Errors.validationFailed("the MCP server document is refused", problems));
  return { ok: true, server: result.value };
}

function checks(
  server: McpServerDocument,
  environment: Pick<ToolTypeEnvironment, "networkPolicy">,
  yaml: ParsedYaml,
): FieldError[] {
  const problems: FieldError[] = [];
  const at = (keys: readonly string[], message: string) => {
    const line = yaml.lineOf(keys);
    problems.push({ path: keys.join("."), message, ...(line === undefined ? {} : { line }) });
  };
  const url = parseHttpUrl(server.url);
  if (url) {
    const host = bareHost(url.hostname);
    // Only literal addresses can be judged on write; host names resolve differently later.
    const problem = isIpLiteral(host) ? environment.networkPolicy.addressProblem(host) : null;
    if (problem) at(["url"], problem);
    if (url.username !== "" || url.password !== "")
      at(
        ["url"],
        "url must not carry credentials; send them in a header such as Authorization: Bearer ${secret:NAME}",
      );
  }
  for (const [name, value] of Object.entries(server.headers)) {
    for (const secret of secretNames([value])) {
      if (!SECRET_NAME_PATTERN.test(secret))
        at(["headers", name], `'${secret}' is not a secret name: upper-case letters, digits and '_'`);
    }
  }
  return problems;
}

function parseHttpUrl(text: string): URL | null {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

function fail(error: VanceError): McpServerDocumentResult {
  return { ok: false, error };
}
