import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  BUILT_IN_TOOL_TYPES,
  createNetworkPolicy,
  inCapabilityFloor,
  MCP_SERVER_DOCUMENTS_DIR,
  mcpServerNameFromPath,
  parseMcpServerDocument,
  parseToolDocument,
  reservedName,
  TOOL_DOCUMENTS_DIR,
  ToolTypeRegistry,
  toolNameProblem,
  type VanceError,
} from "@vance/core";

/** One problem of a document, at a line of its file (1 when the parser knows none). */
export interface LintProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
  /** The code the server would answer the write with (`validation_failed`, `unknown_type`, …). */
  readonly code: string;
}

export interface LintResult {
  readonly files: number;
  readonly problems: readonly LintProblem[];
}

/**
 * The registry the service validates with: the built-in types, under a network policy built from
 * `VANCE_NETWORK_ALLOWLIST` as the server builds it (a literal private address is refused unless
 * listed).
 */
export function lintRegistry(allowlist: string | undefined = process.env.VANCE_NETWORK_ALLOWLIST) {
  const entries = (allowlist ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  return new ToolTypeRegistry(BUILT_IN_TOOL_TYPES, { networkPolicy: createNetworkPolicy(entries) });
}

/**
 * Validates a folder laid out like a layer (`server-tools/*.yaml`, `mcp-servers/*.yaml`) offline,
 * with the parsers every write runs (`parseToolDocument`, `parseMcpServerDocument`): YAML syntax,
 * the schemas, name rules, file name against `name`, unknown types and type parameters.
 */
export function lintFolder(dir: string, registry: ToolTypeRegistry = lintRegistry()): LintResult {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new Error(`'${dir}' is not a folder`);
  }
  const tools = join(dir, TOOL_DOCUMENTS_DIR);
  const servers = join(dir, MCP_SERVER_DOCUMENTS_DIR);
  if (!existsSync(tools) && !existsSync(servers)) {
    throw new Error(`'${dir}' has no ${TOOL_DOCUMENTS_DIR} or ${MCP_SERVER_DOCUMENTS_DIR} folder`);
  }
  const problems: LintProblem[] = [];
  let files = 0;
  for (const entry of entries(tools)) {
    files++;
    problems.push(...lintToolFile(join(tools, entry), entry, registry));
  }
  for (const entry of entries(servers)) {
    files++;
    problems.push(...lintMcpServerFile(join(servers, entry), entry, registry));
  }
  return { files, problems };
}

/** The entries of a folder, sorted, dot-files left out; none when it does not exist. */
function entries(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((entry) => !entry.startsWith("."))
    .sort();
}

function lintToolFile(file: string, entry: string, registry: ToolTypeRegistry): LintProblem[] {
  if (statSync(file).isDirectory() || !entry.endsWith(".yaml")) {
    return [
      {
        file,
        line: 1,
        code: "invalid_id",
        message: `tool documents are stored as ${TOOL_DOCUMENTS_DIR}{name}.yaml`,
      },
    ];
  }
  const name = entry.slice(0, -".yaml".length);
  const problems: LintProblem[] = [];
  const nameProblem = toolNameProblem(name);
  if (nameProblem) {
    problems.push({
      file,
      line: 1,
      code: "invalid_id",
      message: `the file name '${name}' is no tool name: ${nameProblem}`,
    });
  } else if (inCapabilityFloor(name)) {
    problems.push({ file, line: 1, code: "reserved_name", message: reservedName(name).message });
  }
  const parsed = parseToolDocument(readFileSync(file, "utf8"), name, registry);
  if (!parsed.ok) problems.push(...fromError(file, parsed.error));
  return problems;
}

function lintMcpServerFile(file: string, entry: string, registry: ToolTypeRegistry): LintProblem[] {
  const path = `${MCP_SERVER_DOCUMENTS_DIR}${entry}`;
  const problems: LintProblem[] = [];
  if (statSync(file).isDirectory() || !mcpServerNameFromPath(path)) {
    problems.push({
      file,
      line: 1,
      code: "invalid_id",
      message: `MCP server documents are stored as ${MCP_SERVER_DOCUMENTS_DIR}{name}.yaml, name in lowercase snake_case`,
    });
    if (statSync(file).isDirectory()) return problems;
  }
  const parsed = parseMcpServerDocument(readFileSync(file, "utf8"), registry.environment);
  if (!parsed.ok) problems.push(...fromError(file, parsed.error));
  return problems;
}

/** A refused document's field errors, one problem each; the error itself when it names no field. */
function fromError(file: string, error: VanceError): LintProblem[] {
  if (error.errors.length === 0) return [{ file, line: 1, code: error.code, message: error.message }];
  return error.errors.map((field) => ({
    file,
    line: field.line ?? 1,
    code: error.code,
    message: field.path ? `${field.path}: ${field.message}` : field.message,
  }));
}
