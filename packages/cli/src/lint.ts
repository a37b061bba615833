import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  builtInToolTypes,
  createNetworkPolicy,
  inCapabilityFloor,
  loadLazyEngines,
  MCP_SERVER_DOCUMENTS_DIR,
  mcpServerNameFromPath,
  parseMcpServerDocument,
  parseToolDocument,
  reservedName,
  scriptSyntaxMessage,
  scriptSyntaxProblem,
  TOOL_DOCUMENTS_DIR,
  ToolTypeRegistry,
  toolNameProblem,
  type VanceError,
} from "@vance/core";

// Linting compiles schemas as the server's writes do: Ajv and RE2, which core loads lazily.
await loadLazyEngines();

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
  return new ToolTypeRegistry(builtInToolTypes(), { networkPolicy: createNetworkPolicy(entries) });
}

/** A file name of a document `put` stores as a tool (or MCP server) document: `{name}.yaml`, `.yml` or `.json`. */
const YAML_OR_JSON_FILE = /\.(ya?ml|json)$/i;

/**
 * Validates documents offline with the parsers every write runs (`parseToolDocument`,
 * `parseMcpServerDocument`, the script compile): YAML syntax, the schemas, name rules, file name
 * against `name`, unknown types and type parameters, scripts that do not compile. Each path is a
 * folder laid out like a layer (it has `server-tools/` or `mcp-servers/`), a folder of tool
 * files (of MCP server files when it is named `mcp-servers`), or single files, as linters take
 * them. No document at all is an error: nothing was checked.
 */
export function lintPaths(paths: readonly string[], registry: ToolTypeRegistry = lintRegistry()): LintResult {
  const problems: LintProblem[] = [];
  let files = 0;
  const check = (found: LintProblem[]) => {
    files++;
    // A file's problems in line order, as an editor lists them.
    problems.push(...found.sort((a, b) => a.line - b.line));
  };
  for (const path of paths) {
    if (!existsSync(path)) throw new Error(`'${path}' does not exist`);
    if (!statSync(path).isDirectory()) {
      check(lintFile(path, registry));
      continue;
    }
    const tools = join(path, TOOL_DOCUMENTS_DIR);
    const servers = join(path, MCP_SERVER_DOCUMENTS_DIR);
    if (existsSync(tools) || existsSync(servers)) {
      for (const entry of entries(tools)) check(lintToolFile(join(tools, entry), entry, registry));
      for (const entry of entries(servers)) check(lintMcpServerFile(join(servers, entry), entry, registry));
      for (const script of scriptsUnder(path)) check(lintScriptFile(script));
      continue;
    }
    for (const entry of entries(path)) {
      const file = join(path, entry);
      if (!statSync(file).isDirectory() && (YAML_OR_JSON_FILE.test(entry) || entry.endsWith(".js")))
        check(lintFile(file, registry));
    }
  }
  if (files === 0) {
    throw new Error(
      `no documents to lint in ${paths.join(", ")}: give a folder laid out like a layer (${TOOL_DOCUMENTS_DIR}, ${MCP_SERVER_DOCUMENTS_DIR}), a folder of tool files, or files`,
    );
  }
  return { files, problems };
}

/** One file given by itself: a script, an MCP server document (in a `mcp-servers` folder) or a tool document. */
function lintFile(file: string, registry: ToolTypeRegistry): LintProblem[] {
  const entry = basename(file);
  if (entry.endsWith(".js")) return lintScriptFile(file);
  if (!YAML_OR_JSON_FILE.test(entry)) {
    return [
      {
        file,
        line: 1,
        code: "unknown_document",
        message:
          "not a document lint checks: tool and MCP server documents are .yaml (or .json), scripts .js",
      },
    ];
  }
  const name = entry.replace(YAML_OR_JSON_FILE, "");
  return `${basename(dirname(file))}/` === MCP_SERVER_DOCUMENTS_DIR
    ? lintMcpServerFile(file, `${name}.yaml`, registry)
    : lintToolFile(file, `${name}.yaml`, registry);
}

/** Every `.js` document in a layer folder's sub-folders (the sandbox runs any of them a tool names). */
function scriptsUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number) => {
    for (const entry of entries(folder)) {
      const file = join(folder, entry);
      if (statSync(file).isDirectory()) {
        if (entry !== "node_modules") walk(file, depth + 1);
      } else if (depth > 0 && entry.endsWith(".js")) found.push(file);
    }
  };
  walk(dir, 0);
  return found;
}

function lintScriptFile(file: string): LintProblem[] {
  const problem = scriptSyntaxProblem(readFileSync(file, "utf8"));
  return problem
    ? [{ file, line: problem.line, code: "validation_failed", message: scriptSyntaxMessage(problem) }]
    : [];
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
