import { mkdirSync, readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import {
  assertProjectId,
  assertTenantId,
  MCP_SERVER_DOCUMENTS_DIR,
  mcpServerDocumentJsonSchema,
  TOOL_DOCUMENTS_DIR,
  toolDocumentJsonSchema,
  VanceError,
} from "@vance/core";
import { Argument, Command, CommanderError, Option } from "commander";
import { type CliApi, CliError, connect, dataOf, documentPathSerializer } from "./api";
import { lintPaths, lintRegistry } from "./lint";
import { json, PROCESS_STREAMS, ProgressBar, paint, type Streams, table, writeText } from "./output";
import { contentTypeOf, folderDocuments, LayerSync, type PushSummary, STATE_FILE, SyncState } from "./sync";

/** Where `npm start` listens unless `PORT` says otherwise (API.md "Conventions"). */
export const DEFAULT_URL = "http://127.0.0.1:8787";

/** `T` of API.md, as `@vance/client` names its routes. */
const T = "/v1/tenants/{tenant}/projects/{project}";

interface GlobalOptions {
  json?: boolean;
  url?: string;
  token?: string;
  tenant?: string;
  project?: string;
}

/** What every command knows: how to print, and how to reach the API when it needs to. */
class Context {
  readonly json: boolean;
  /** 1 once a command found problems it reported itself (lint, push, a failed tool). */
  exitCode = 0;
  readonly colours;
  readonly errColours;

  constructor(
    private readonly options: GlobalOptions,
    readonly streams: Streams,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.json = options.json === true;
    this.colours = paint(streams.out, env);
    this.errColours = paint(streams.err, env);
  }

  /** A line of results on stdout; on a terminal, control characters of what it quotes are neutralised. */
  print(text: string): void {
    writeText(this.streams.out, `${text}\n`);
  }

  /** A line of notes on stderr, neutralised on a terminal as `print` is. */
  note(text: string): void {
    writeText(this.streams.err, `${text}\n`);
  }

  /** Prints `value` as JSON with `--json`, else `human()`. */
  emit(value: unknown, human: () => string): void {
    this.print(this.json ? json(value) : human());
  }

  client(): CliApi {
    const token = this.options.token ?? this.env.VANCE_TOKEN;
    if (!token) {
      throw new CliError(
        "no token: pass --token or set VANCE_TOKEN (npm start prints a development token, npm run token mints one)",
      );
    }
    return connect({ url: this.options.url ?? this.env.VANCE_URL ?? DEFAULT_URL, token });
  }

  tenant(): string {
    const tenant = this.options.tenant ?? this.env.VANCE_TENANT;
    if (!tenant) throw new CliError("no tenant: pass --tenant or set VANCE_TENANT");
    checkId(() => assertTenantId(tenant));
    return tenant;
  }

  /** The path parameters of `T` (API.md) for `--tenant` and `--project` (`_tenant` addresses the tenant layer). */
  project(): { tenant: string; project: string } {
    const tenant = this.tenant();
    const project = this.options.project ?? this.env.VANCE_PROJECT;
    if (!project)
      throw new CliError("no project: pass --project or set VANCE_PROJECT (_tenant: the tenant layer)");
    checkId(() => assertProjectId(project));
    return { tenant, project };
  }

  /** `tenant/project` of the command, for empty states. */
  where(): string {
    const { tenant, project } = this.project();
    return `${tenant}/${project}`;
  }
}

function checkId(assert: () => void): void {
  try {
    assert();
  } catch (error) {
    if (error instanceof VanceError) throw new CliError(error.message, error.code);
    throw error;
  }
}

/** When and by whom a tool's document was last written, as a column: `2025-01-01 12:00 alice`. */
function updated(tool: { readonly updatedAt: string | null; readonly updatedBy: string | null }): string {
  if (tool.updatedAt === null) return "";
  const at = tool.updatedAt.slice(0, 16).replace("T", " ");
  return tool.updatedBy === null ? at : `${at} ${tool.updatedBy}`;
}

/** The document path `put` stores a file at: `mcp-servers/` when it lies in such a folder, else a tool's. */
function documentPathFor(file: string): string {
  const name = basename(file).replace(/\.(ya?ml|json)$/i, "");
  const folder = `${basename(dirname(file))}/`;
  return folder === MCP_SERVER_DOCUMENTS_DIR
    ? `${MCP_SERVER_DOCUMENTS_DIR}${name}.yaml`
    : `${TOOL_DOCUMENTS_DIR}${name}.yaml`;
}

/** Reads all of stdin (a secret's value that should not sit in the shell history). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function parseParams(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`--params is not JSON: ${(error as Error).message}`);
  }
}

function yesNo(flag: boolean): string {
  return flag ? "yes" : "no";
}

/** The program: every command, its options and its help. */
export function buildProgram(streams: Streams, env: NodeJS.ProcessEnv, onContext: (c: Context) => void) {
  const program = new Command("vance-tools")
    .description("Lint, push and read the tool documents of Vance Server Tools")
    .option("--json", "machine-readable output (one JSON document on stdout)")
    .option("--url <url>", `the API's base URL (VANCE_URL, default ${DEFAULT_URL})`)
    .option("--token <jwt>", "bearer token (VANCE_TOKEN)")
    .option("--tenant <id>", "tenant id (VANCE_TENANT)")
    .option("--project <id>", "project id, _tenant for the tenant layer (VANCE_PROJECT)")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => streams.out.write(text),
      writeErr: (text) => streams.err.write(text),
    });

  const context = (command: Command) => {
    const made = new Context(command.optsWithGlobals<GlobalOptions>(), streams, env);
    onContext(made);
    return made;
  };

  program
    .command("lint")
    .description(
      "validate tool documents, MCP server documents and scripts offline, as a write would; exit 1 on any problem",
    )
    .argument(
      "<paths...>",
      "a folder laid out like a layer (server-tools/, mcp-servers/), a folder of tool files, or files",
    )
    .action((paths: string[], _options, command: Command) => {
      const c = context(command);
      const result = lintPaths(paths, lintRegistry(env.VANCE_NETWORK_ALLOWLIST));
      if (c.json) {
        c.print(json(result));
      } else {
        for (const problem of result.problems) {
          c.print(
            `${problem.file}:${problem.line}: ${problem.message} ${c.colours.dim(`[${problem.code}]`)}`,
          );
        }
        const files = `${result.files} document${result.files === 1 ? "" : "s"}`;
        c.note(
          result.problems.length === 0
            ? c.errColours.green(`${files} valid`)
            : c.errColours.red(`${result.problems.length} problem(s) in ${files}`),
        );
      }
      if (result.problems.length > 0) c.exitCode = 1;
    });

  program
    .command("schema")
    .description("print the JSON Schema of tool documents (or MCP server documents) for YAML editors")
    .addArgument(new Argument("[kind]", "tool or mcp-server").choices(["tool", "mcp-server"]).default("tool"))
    .action((kind: string, _options, command: Command) => {
      const c = context(command);
      c.print(json(kind === "tool" ? toolDocumentJsonSchema(lintRegistry()) : mcpServerDocumentJsonSchema()));
    });

  program
    .command("types")
    .description("list the tool types")
    .action((_options, command: Command) => {
      const c = context(command);
      const types = lintRegistry().describe();
      c.emit({ types }, () =>
        table(
          ["TYPE", "DESCRIPTION"],
          types.map((type) => [type.typeId, type.description]),
          c.colours,
        ),
      );
    });

  program
    .command("list")
    .description("the project's merged tools: name, layer, type, labels, primary, pack, last update")
    .option("--label <label>", "only tools carrying this label")
    .action(async (options: { label?: string }, command: Command) => {
      const c = context(command);
      const path = c.project();
      const body = await dataOf(
        c
          .client()
          .api.GET(`${T}/tools`, { params: { path, query: options.label ? { label: options.label } : {} } }),
      );
      c.emit(body, () =>
        body.tools.length === 0
          ? `no tools${options.label ? ` labelled '${options.label}'` : ""} in ${c.where()}`
          : table(
              ["NAME", "LAYER", "TYPE", "LABELS", "PRIMARY", "PACK", "UPDATED"],
              body.tools.map((tool) => [
                tool.name,
                tool.layer,
                tool.type,
                tool.labels.join(","),
                yesNo(tool.primary),
                tool.pack ?? "",
                updated(tool),
              ]),
              c.colours,
            ),
      );
      // Documents no listing offers are said, not dropped (the JSON output carries them as `invalid`).
      if (!c.json) {
        for (const document of body.invalid ?? []) {
          c.note(`invalid: ${document.path} (${document.layer}): ${document.message}`);
        }
        // A pack whose source fails has no rows above (or stale ones): its line says so.
        for (const pack of body.packs ?? []) {
          if (pack.status === "current") continue;
          c.note(
            `pack ${pack.pack} (${pack.layer}): ${pack.status}, ${pack.subTools} sub-tool${pack.subTools === 1 ? "" : "s"}: ${pack.reason ?? ""}`,
          );
        }
      }
    });

  program
    .command("get")
    .description("a tool's stored document (stdout) and its ETag (stderr)")
    .argument("<name>", "the tool's name")
    .action(async (name: string, _options, command: Command) => {
      const c = context(command);
      const { tenant, project } = c.project();
      const client = c.client();
      try {
        const document = await new LayerSync(client, tenant, project).read(
          `${TOOL_DOCUMENTS_DIR}${name}.yaml`,
        );
        if (c.json) {
          c.print(json({ name, layer: document.layer, etag: document.etag, document: document.text }));
        } else {
          writeText(c.streams.out, document.text.endsWith("\n") ? document.text : `${document.text}\n`);
          c.note(c.errColours.dim(`# layer: ${document.layer}  ETag: ${document.etag ?? "none"}`));
        }
      } catch (error) {
        // Built-in tools and pack sub-tools have no document of their own: the tool as resolved.
        if (!(error instanceof CliError) || error.code !== "document_not_found") throw error;
        const tool = await dataOf(
          client.api.GET(`${T}/tools/{name}`, { params: { path: { tenant, project, name } } }),
        );
        c.emit(tool, () => json(tool.config));
        if (!c.json) c.note(c.errColours.dim(`# layer: ${tool.layer} (no stored document)`));
      }
    });

  program
    .command("put")
    .description(
      "store a document: server-tools/{name}.yaml from its file name, or mcp-servers/ when it lies in such a folder",
    )
    .argument("<file>", "a YAML (or JSON) document")
    .option("--path <path>", "the document path to store it at, e.g. documents/guide.md")
    .option("--if-match <etag>", "only replace this version (412 precondition_failed when it changed)")
    .option("--if-none-match", "only create (412 precondition_failed when it exists)")
    .action(
      async (
        file: string,
        options: { path?: string; ifMatch?: string; ifNoneMatch?: boolean },
        command: Command,
      ) => {
        const c = context(command);
        const { tenant, project } = c.project();
        const path = options.path ?? documentPathFor(file);
        const text = readFileSync(file, "utf8");
        const written = await new LayerSync(c.client(), tenant, project).write(
          path,
          text,
          {
            ...(options.ifMatch ? { ifMatch: options.ifMatch } : {}),
            ...(options.ifNoneMatch ? { ifNoneMatch: "*" } : {}),
          },
          // A JSON file is sent as JSON, whatever path it is stored at.
          contentTypeOf(file),
        );
        c.emit(
          { path, created: written.created, etag: written.etag, result: written.body },
          () => `${written.created ? c.colours.green("created") : "replaced"} ${path}  ETag: ${written.etag}`,
        );
      },
    );

  program
    .command("delete")
    .description("delete a tool document of this layer (or any document, given its path)")
    .argument("<name>", "a tool name, or a document path such as mcp-servers/jira.yaml")
    .option("--if-match <etag>", "only delete this version")
    .action(async (name: string, options: { ifMatch?: string }, command: Command) => {
      const c = context(command);
      const path = name.includes("/") ? name : `${TOOL_DOCUMENTS_DIR}${name}.yaml`;
      await dataOf(
        c.client().api.DELETE(`${T}/documents/{path}`, {
          params: { path: { ...c.project(), path } },
          pathSerializer: documentPathSerializer,
          headers: options.ifMatch ? { "if-match": options.ifMatch } : {},
        }),
      );
      c.emit({ deleted: path }, () => `deleted ${path}`);
    });

  program
    .command("invoke")
    .description("invoke a tool with parameters; exit 1 when the tool failed")
    .argument("<name>", "the tool's name")
    .option("--params <json>", "the tool's parameters as a JSON object", "{}")
    .action(async (name: string, options: { params: string }, command: Command) => {
      const c = context(command);
      const path = { ...c.project(), name };
      const params = parseParams(options.params);
      const result = await dataOf(
        c.client().api.POST(`${T}/tools/{name}/invoke`, { params: { path }, body: { params } }),
      );
      if ("error" in result) {
        c.emit(result, () => c.colours.red(`${result.error}: ${result.message ?? ""}`));
        c.exitCode = 1;
        return;
      }
      // A text answer (a document, a rendered prompt) reads best as text.
      const value = "value" in result ? result.value : undefined;
      c.emit(result, () => (typeof value === "string" ? value : json(value)));
      if (!c.json) c.note(c.errColours.dim(`# ${result.durationMs} ms`));
    });

  program
    .command("usage")
    .description("tool usage per role: calls, tool_description look-ups, last use")
    .action(async (_options, command: Command) => {
      const c = context(command);
      const body = await dataOf(
        c.client().api.GET(`${T}/insights/tool-usage`, { params: { path: c.project() } }),
      );
      c.emit(body, () =>
        body.roles.every((role) => role.tools.length === 0)
          ? `no usage recorded in ${c.where()} yet: calls are counted per role when made in a process (invoke_tool, a process's invoke, MCP tools/call); direct invokes (vance-tools invoke) are not counted`
          : table(
              ["ROLE", "TOOL", "CALLS", "LOOK-UPS", "LAST USED"],
              body.roles.flatMap((role) =>
                role.tools.map((tool) => [
                  role.role,
                  tool.name,
                  String(tool.calls),
                  String(tool.discoveryHits),
                  tool.lastUsedAt ?? "",
                ]),
              ),
              c.colours,
            ),
      );
    });

  program
    .command("manifest")
    .description("a process's manifest this turn: budget, tools on the wire, deferred and demoted")
    .argument("<processId>", "the id a spawn answered")
    .addOption(
      new Option("--format <format>", "wire format").choices(["openai", "anthropic"]).default("openai"),
    )
    .action(async (processId: string, options: { format: "openai" | "anthropic" }, command: Command) => {
      const c = context(command);
      const path = { ...c.project(), id: processId };
      const manifest = await dataOf(
        c
          .client()
          .api.GET(`${T}/processes/{id}/manifest`, { params: { path, query: { format: options.format } } }),
      );
      c.emit(manifest, () => {
        const { maxTools, reserve, limit } = manifest.budget;
        const list = (names: string[]) =>
          names.length === 0 ? "  (none)" : names.map((n) => `  ${n}`).join("\n");
        // What differs between the formats is the tools array's shape and size: say both.
        const shape = manifest.tools[0] ? `each {${Object.keys(manifest.tools[0]).join(", ")}}` : "empty";
        const bytes = JSON.stringify(manifest.tools).length.toLocaleString("en-US");
        const { deferred = [], demoted = [] } = manifest;
        return [
          `tools array in the ${options.format} format: ${manifest.tools.length} tools, ${bytes} bytes, ${shape} (--json prints it)`,
          `budget: maxTools ${maxTools ?? "unknown"}, reserve ${reserve}, limit ${limit ?? "none"}`,
          c.colours.bold(`on the wire (${manifest.primary.length})`),
          list(manifest.primary),
          // Asked without `?names=`, the answer always carries both lists.
          c.colours.bold(`deferred (${deferred.length})`),
          list(deferred),
          c.colours.bold(`demoted by the budget (${demoted.length})`),
          list(demoted),
        ].join("\n");
      });
    });

  const secrets = program.command("secrets").description("a tenant's secrets (values are never shown)");
  secrets
    .command("set")
    .description("store a secret; the value comes from stdin unless --value is given")
    .argument("<NAME>", "upper-case letters, digits and _")
    .option("--value <value>", "the value (visible in the process list: prefer stdin)")
    .action(async (name: string, options: { value?: string }, command: Command) => {
      const c = context(command);
      const tenant = c.tenant();
      if (options.value === undefined && process.stdin.isTTY) c.note("Type the value, then Ctrl-D:");
      const value = options.value ?? (await readStdin());
      await dataOf(
        c.client().api.PUT("/v1/tenants/{tenant}/secrets/{name}", {
          params: { path: { tenant, name } },
          body: { value },
        }),
      );
      c.emit({ set: name }, () => `set ${name}`);
    });
  secrets
    .command("list")
    .description("the tenant's secret names and when they changed")
    .action(async (_options, command: Command) => {
      const c = context(command);
      const body = await dataOf(
        c.client().api.GET("/v1/tenants/{tenant}/secrets", { params: { path: { tenant: c.tenant() } } }),
      );
      c.emit(body, () =>
        body.secrets.length === 0
          ? `tenant ${c.tenant()} has no secrets (vance-tools secrets set NAME stores one)`
          : table(
              ["NAME", "UPDATED"],
              body.secrets.map((secret) => [secret.name, secret.updatedAt]),
              c.colours,
            ),
      );
    });
  secrets
    .command("delete")
    .description("delete a secret")
    .argument("<NAME>", "the secret's name")
    .action(async (name: string, _options, command: Command) => {
      const c = context(command);
      await dataOf(
        c.client().api.DELETE("/v1/tenants/{tenant}/secrets/{name}", {
          params: { path: { tenant: c.tenant(), name } },
        }),
      );
      c.emit({ deleted: name }, () => `deleted ${name}`);
    });

  const limits = program
    .command("limits")
    .description("tool limits learned from providers' rejections (admin): list and withdraw");
  limits
    .command("list")
    .description("the learned limits: a platform token's every scope, a tenant admin's own tenant")
    .action(async (_options, command: Command) => {
      const c = context(command);
      const body = await dataOf(c.client().api.GET("/v1/models/observed-limits"));
      c.emit(body, () =>
        body.limits.length === 0
          ? "no tool limits learned (an engine reports a provider's rejection to POST /v1/models/observed-limits)"
          : table(
              ["SCOPE", "ENDPOINT", "MAX TOOLS", "FROM MODEL", "LEARNED"],
              body.limits.map((limit) => [
                limit.scope,
                limit.instance,
                String(limit.maxTools),
                limit.model,
                limit.observedAt,
              ]),
              c.colours,
            ),
      );
    });
  limits
    .command("withdraw")
    .description("withdraw a learned limit: every instance stops applying it")
    .argument("<SCOPE>", "'*' (the platform's) or a tenant id")
    .argument("<ENDPOINT>", "the catalog instance, e.g. openai")
    .action(async (scope: string, endpoint: string, _options, command: Command) => {
      const c = context(command);
      await dataOf(
        c.client().api.DELETE("/v1/models/observed-limits/{scope}/{instance}", {
          params: { path: { scope, instance: endpoint } },
        }),
      );
      c.emit(
        { withdrawn: { scope, endpoint } },
        () => `withdrew the limit learned for ${endpoint} in scope ${scope}`,
      );
    });

  program
    .command("push")
    .description(
      "upload a folder's documents into the layer: unchanged ones skipped; nothing sent when one changed on the server since the last pull or push",
    )
    .argument("<dir>", "a folder laid out like a layer (server-tools/, mcp-servers/, documents/, …)")
    .option("--force", "write without preconditions and go on past every failure")
    .action(async (dir: string, options: { force?: boolean }, command: Command) => {
      const c = context(command);
      const { tenant, project } = c.project();
      const documents = folderDocuments(dir);
      if (documents.length === 0) {
        throw new CliError(
          `no documents in ${dir}: documents live in its sub-folders (server-tools/, mcp-servers/, documents/, …)`,
        );
      }
      const sync = new LayerSync(c.client(), tenant, project);
      const state = SyncState.load(dir, sync.key);
      const bar = new ProgressBar(c.streams.err, documents.length, !c.json);
      const summary = await sync.push(documents, { force: options.force === true, progress: bar, state });
      bar.finish();
      state.save();
      c.emit(summary, () => pushReport(summary, c));
      if (summary.failed.length > 0 || summary.stopped || summary.conflicts.length > 0) c.exitCode = 1;
    });

  program
    .command("pull")
    .description("write the layer's documents into a folder, as stored")
    .argument("<dir>", "the folder to write into (created when missing)")
    .option("--prefix <folder>", "only documents under this folder, e.g. server-tools/")
    .action(async (dir: string, options: { prefix?: string }, command: Command) => {
      const c = context(command);
      const { tenant, project } = c.project();
      const sync = new LayerSync(c.client(), tenant, project);
      mkdirSync(dir, { recursive: true });
      const state = SyncState.load(dir, sync.key);
      const pulled = await sync.pull(dir, state, options.prefix ?? "");
      state.save();
      c.emit({ dir, ...pulled }, () =>
        [
          ...pulled.leftOut.map((skipped) => c.colours.yellow(`left out ${skipped.path}: ${skipped.reason}`)),
          pulled.paths.length === 0
            ? `the ${pulled.layer} layer of ${tenant}/${project} has no documents${options.prefix ? ` under ${options.prefix}` : ""} to pull; nothing written`
            : `pulled ${pulled.paths.length} document(s) of the ${pulled.layer} layer of ${tenant}/${project} into ${dir} (ETags in ${STATE_FILE})`,
        ].join("\n"),
      );
    });

  return program;
}

function pushReport(summary: PushSummary, c: Context): string {
  const { green, red, yellow, dim } = c.colours;
  const lines: string[] = [];
  for (const conflict of summary.conflicts) lines.push(yellow(`conflict: ${conflict.message}`));
  if (summary.conflicts.length > 0) {
    lines.push(
      yellow(
        `nothing sent: ${summary.conflicts.length} document(s) changed on the server; pull them, or push --force to overwrite`,
      ),
    );
  }
  for (const failed of summary.failed) {
    lines.push(red(`failed ${failed.path}: ${failed.message} [${failed.code}]`));
    for (const error of failed.errors) {
      lines.push(
        `  ${failed.path}:${error.line ?? 1}: ${error.path ? `${error.path}: ` : ""}${error.message}`,
      );
    }
  }
  if (summary.stopped) {
    lines.push(
      yellow(
        `stopped at ${summary.stopped.path}: ${summary.stopped.message} [${summary.stopped.code}]; ${summary.notSent.length} document(s) not sent (--force overwrites)`,
      ),
    );
  }
  // After "nothing sent" a line of zero counts would read like a second outcome.
  if (summary.conflicts.length > 0) return lines.join("\n");
  lines.push(
    [
      green(`created ${summary.created.length}`),
      `replaced ${summary.replaced.length}`,
      dim(`unchanged ${summary.unchanged.length}`),
      summary.failed.length > 0 ? red(`failed ${summary.failed.length}`) : `failed 0`,
    ].join(", "),
  );
  return lines.join("\n");
}

/**
 * Runs the CLI on `argv` (node, script, …) and answers the exit code: 0, or 1 on any error, with
 * the server's problem `code` in the message (and as JSON with `--json`).
 */
export async function runCli(
  argv: readonly string[],
  streams: Streams = PROCESS_STREAMS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let context: Context | undefined;
  const program = buildProgram(streams, env, (made) => {
    context = made;
  });
  try {
    await program.parseAsync([...argv]);
    return context?.exitCode ?? 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const jsonOutput = context?.json ?? argv.includes("--json");
    const failure =
      error instanceof CliError
        ? error
        : new CliError(error instanceof Error ? error.message : String(error));
    if (jsonOutput) {
      streams.out.write(
        `${json({ error: { message: failure.message, code: failure.code ?? null, status: failure.status ?? null, errors: failure.errors } })}\n`,
      );
    } else {
      const colours = paint(streams.err, env);
      const tag = [failure.code, failure.status ? `HTTP ${failure.status}` : undefined]
        .filter(Boolean)
        .join(", ");
      writeText(streams.err, `${colours.red("error:")} ${failure.message}${tag ? ` [${tag}]` : ""}\n`);
      for (const field of failure.errors) {
        const line = field.line === undefined ? "" : ` (line ${field.line})`;
        writeText(streams.err, `  ${field.path || "document"}${line}: ${field.message}\n`);
      }
    }
    return 1;
  }
}
