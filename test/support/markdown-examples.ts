import { execFile } from "node:child_process";

/** A fenced shell block of a Markdown file: the docs test runs it unless a marker above says why not. */
export interface ShellBlock {
  readonly file: string;
  /** The line of its opening fence (1-based). */
  readonly line: number;
  readonly source: string;
  /** The reason of its `<!-- docs-test: skip — reason -->` marker, when it has one. */
  readonly skip?: string;
}

/** A command written inline (`npm run token -- …`, `npx vance-tools lint …`, `curl …`). */
export interface InlineCommand {
  readonly file: string;
  readonly line: number;
  readonly command: string;
}

/** What a Markdown file holds for the docs test, and its markers that mark nothing. */
export interface MarkdownExamples {
  readonly blocks: ShellBlock[];
  readonly inline: InlineCommand[];
  readonly problems: string[];
}

const SHELL = new Set(["sh", "bash", "shell", "console"]);
const FENCE = /^\s*```(\S*)\s*$/;
/** The one way to mark a block: the line above it (blank lines between allowed). */
const MARKER = /^<!--\s*docs-test:\s*skip\s*(?:—|-{1,2}|:)?\s*(.*?)\s*-->$/;
const INLINE = /`((?:npx vance-tools|vance-tools|npm run|curl) [^`]+)`/g;

/** The shell blocks, inline commands and misplaced or reasonless markers of one Markdown file. */
export function markdownExamples(file: string, text: string): MarkdownExamples {
  const lines = text.split("\n");
  const blocks: ShellBlock[] = [];
  const inline: InlineCommand[] = [];
  const problems: string[] = [];
  let pending: { line: number; reason: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = MARKER.exec(line.trim());
    if (marker) {
      if (pending) problems.push(`${file}:${pending.line}: a docs-test marker with no shell block below it`);
      if (!marker[1]) problems.push(`${file}:${i + 1}: a docs-test skip marker must say why`);
      pending = { line: i + 1, reason: marker[1] ?? "" };
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      const lang = fence[1] ?? "";
      if (SHELL.has(lang)) {
        const indent = /^\s*/.exec(line)![0].length;
        blocks.push({
          file,
          line: start + 1,
          source: body.map((text) => text.slice(indent)).join("\n"),
          ...(pending ? { skip: pending.reason } : {}),
        });
      } else if (pending) {
        problems.push(
          `${file}:${pending.line}: a docs-test marker above a \`${lang || "plain"}\` block, not a shell one`,
        );
      }
      pending = undefined;
      continue;
    }
    if (pending && line.trim() !== "") {
      problems.push(`${file}:${pending.line}: a docs-test marker with no shell block below it`);
      pending = undefined;
    }
    for (const match of line.matchAll(INLINE)) inline.push({ file, line: i + 1, command: match[1]! });
  }
  if (pending) problems.push(`${file}:${pending.line}: a docs-test marker with no shell block below it`);
  return { blocks, inline, problems };
}

/** The docs files in the order of README's map (`| topic | [docs/x.md](docs/x.md) |`), each once. */
export function mapOrder(readme: string): string[] {
  const rows = readme.split("\n").filter((line) => line.startsWith("|"));
  const files = rows.flatMap((row) =>
    [...row.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((match) => match[1]!),
  );
  return [...new Set(files)];
}

/** A run of a block's commands up to an answer it shows (`# → {"value":3,…}`), or to its end. */
export interface Step {
  readonly source: string;
  /** The JSON answer shown under the commands, `…` standing for what varies. */
  readonly expected?: string;
}

/**
 * A block cut after each `# → {…}` / `# → […]` line: the JSON its commands answer last. Other
 * `# →` lines (a status, a sentence) are prose and checked by nothing but the commands' success.
 */
export function stepsOf(source: string): Step[] {
  const steps: Step[] = [];
  let lines: string[] = [];
  for (const line of source.split("\n")) {
    lines.push(line);
    const shown = /^# → ([[{].*)$/.exec(line.trim());
    if (shown) {
      steps.push({ source: lines.join("\n"), expected: shown[1]! });
      lines = [];
    }
  }
  if (lines.some((line) => line.trim() !== "")) steps.push({ source: lines.join("\n") });
  return steps;
}

/** Whether a step's output ends with the answer shown: its last line, `…` matching anything. */
export function showsAnswer(output: string, expected: string): boolean {
  const last = output.trimEnd().split("\n").at(-1) ?? "";
  const pattern = expected
    .split("…")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*?");
  return new RegExp(`^${pattern}$`).test(last.trim());
}

/** What one shell run of a file's blocks answered. */
export interface ShellRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The index of the block that was running when the shell stopped (the last begun). */
  readonly lastBlock: number;
  /** What each step printed on stdout, by block and step index (`"0.1"`). */
  readonly outputs: ReadonlyMap<string, string>;
}

const BEGIN = "::docs-test block ";
const STEP = "::docs-test step ";

/**
 * The shell the examples run in: bash, stopping at the first failing command (`set -e`,
 * `pipefail`), in a scratch folder; `npm` is the repository's (`--prefix`), `npx vance-tools`
 * the bin `npm install` linked there, and `curl` fails on an HTTP error (`--fail-with-body`),
 * so a refused request fails its block as a user would notice it.
 */
const PRELUDE = [
  "set -eo pipefail",
  'npm() { command npm --prefix "$VANCE_REPO" "$@"; }',
  'npx() { if [ "$1" = vance-tools ]; then shift; "$VANCE_REPO/node_modules/.bin/vance-tools" "$@"; else command npx "$@"; fi; }',
  'curl() { command curl --fail-with-body "$@"; }',
].join("\n");

/**
 * Runs the blocks' steps one after another in one bash (variables carry from block to block), after
 * `state` (a script of variables an earlier file left), and writes the variables named in
 * `keep` to `stateOut` at the end.
 */
export function runShell(options: {
  readonly blocks: readonly (readonly Step[])[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly state?: string;
  readonly keep?: readonly string[];
  readonly stateOut?: string;
  readonly timeoutMs: number;
}): Promise<ShellRun> {
  const script = [
    PRELUDE,
    // A tour that failed early left no state: the page after it fails on its own account.
    options.state
      ? `if [ -f ${JSON.stringify(options.state)} ]; then source ${JSON.stringify(options.state)}; fi`
      : "",
    ...options.blocks.flatMap((steps, block) => [
      `echo '${BEGIN}${block}' >&2`,
      ...steps.flatMap((step, index) => [`printf '\\n${STEP}${block}.${index}\\n'`, step.source]),
    ]),
    options.keep && options.stateOut
      ? `declare -p ${options.keep.join(" ")} > ${JSON.stringify(options.stateOut)}`
      : "",
  ].join("\n");
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", script],
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const begun = [...stderr.matchAll(new RegExp(`${BEGIN}(\\d+)`, "g"))].map((m) => Number(m[1]));
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        const outputs = new Map<string, string>();
        for (const part of stdout.split(`\n${STEP}`).slice(1)) {
          const end = part.indexOf("\n");
          outputs.set(part.slice(0, end), part.slice(end + 1));
        }
        resolve({ code, stdout, stderr, lastBlock: begun.at(-1) ?? -1, outputs });
      },
    );
  });
}

/** A tool or MCP server document shown in a `yaml` block, at the layer path its first comment names. */
export interface ShownDocument {
  readonly file: string;
  readonly line: number;
  /** `server-tools/{name}.yaml` or `mcp-servers/{name}.yaml`. */
  readonly path: string;
  readonly yaml: string;
}

/** Where a shown document says it goes: `# server-tools/x.yaml …`, `# mcp-servers/x.yaml …` or `# PUT T/tools/x`. */
const SHOWN_PATH = /^#\s+(?:((?:server-tools|mcp-servers)\/[\w-]+\.yaml)\b|PUT T\/tools\/([\w-]+))/;

/** The documents of a file's `yaml` blocks that name their path (several per block, `---` between). */
export function shownDocuments(file: string, text: string): ShownDocument[] {
  const documents: ShownDocument[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```ya?ml\s*$/.test(lines[i]!)) continue;
    const start = i + 1; // the fence's line; the block's first line is the next
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    let offset = 0;
    for (const part of body.join("\n").split(/^---$/m)) {
      const yaml = part.replace(/^\n/, "");
      const named = SHOWN_PATH.exec(yaml.split("\n")[0] ?? "");
      if (named) {
        const path = named[1] ?? `server-tools/${named[2]}.yaml`;
        documents.push({ file, line: start + 1 + offset, path, yaml });
      }
      offset += part.split("\n").length;
    }
  }
  return documents;
}
