import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, startLocalServer } from "./support/local-server";
import {
  mapOrder,
  markdownExamples,
  runShell,
  type ShellBlock,
  shownDocuments,
  showsAnswer,
  stepsOf,
} from "./support/markdown-examples";
import { initializeMessage } from "./support/mcp-messages";

/**
 * Every shell example of README.md and docs/*.md, run against a server started as `npm start`
 * starts it: the blocks of each file in one bash, the files in the order of README's map, so the
 * docs continue the README's tour with the variables it set (`TOKEN`, `B`, `PROCESS`). A block
 * that cannot run here carries `<!-- docs-test: skip — why -->` above it; any other block that
 * fails fails this test, and so does a JSON answer shown under a block (`# → {…}`) that its
 * commands did not print. The rest the docs show is held to the same server or tools: the MCP
 * client URLs open sessions, the tool documents pass `vance-tools lint`, `docs/openapi.json` is
 * what `/openapi.json` answers, and inline commands name what exists (an npm script, a CLI command).
 */

const ROOT = process.cwd();
const FILES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs")).flatMap((f) => (f.endsWith(".md") ? [`docs/${f}`] : [])),
];
/** What the tour leaves for the pages after it. */
const TOUR_STATE = ["TOKEN", "B", "PROCESS"];
/** What only the reader has: their own Jira token for `secrets set`. */
const READERS_OWN = { JIRA_TOKEN: "a-jira-token-of-the-reader" };

const text = (file: string) => readFileSync(join(ROOT, file), "utf8");
const examples = new Map(FILES.map((file) => [file, markdownExamples(file, text(file))]));
const order = ["README.md", ...mapOrder(text("README.md"))];

let server: LocalServer;
let scratch: string;
const ran: ShellBlock[] = [];
/** The `# → {…}` answers compared with what their commands printed. */
let answers = 0;
const failures: string[] = [];

beforeAll(async () => {
  server = await startLocalServer({ timeoutMs: 40_000 });
  scratch = mkdtempSync(join(tmpdir(), "vance-docs-"));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function envFor(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    // The reader's shell has none of the suite's settings for the server or the CLI.
    if (!/^(VANCE_|PORT$|HOST$)/.test(name)) env[name] = value;
  }
  return { ...env, ...READERS_OWN, VANCE_REPO: ROOT, VANCE_DATA_DIR: server.dataDir, NO_COLOR: "1" };
}

describe("the docs' shell examples", () => {
  it("every file is in README's map, and every skip marker sits above a shell block with its reason", () => {
    expect([...order].sort()).toEqual([...FILES].sort());
    expect([...examples.values()].flatMap((found) => found.problems)).toEqual([]);
  });

  it("run against a started server, file by file in the map's order", async () => {
    let jq = true;
    try {
      execFileSync("jq", ["--version"]);
    } catch {
      jq = false;
    }
    expect(jq, "the examples read JSON answers with jq: install it (apt-get install jq)").toBe(true);
    const port = new URL(server.base).port;
    const state = join(scratch, "tour-state.sh");
    for (const file of order) {
      const blocks = examples.get(file)!.blocks.filter((block) => block.skip === undefined);
      if (blocks.length === 0) continue;
      const cwd = mkdtempSync(join(scratch, "run-"));
      const steps = blocks.map((block) =>
        stepsOf(block.source.replace(/(127\.0\.0\.1|localhost):8787/g, `127.0.0.1:${port}`)),
      );
      const run = await runShell({
        blocks: steps,
        cwd,
        env: envFor(),
        ...(file === "README.md" ? { keep: TOUR_STATE, stateOut: state } : { state }),
        // A bound for a hung command, not a speed goal: ~10 s a page on an idle machine.
        timeoutMs: 150_000,
      });
      for (const [b, block] of steps.entries()) {
        for (const [i, step] of block.entries()) {
          const output = run.outputs.get(`${b}.${i}`);
          if (step.expected === undefined || output === undefined) continue;
          answers++;
          if (!showsAnswer(output, step.expected)) {
            failures.push(
              `${file}:${blocks[b]!.line} shows ${step.expected}\nbut its commands answered:\n${output.trimEnd().slice(-1_000)}`,
            );
          }
        }
      }
      if (run.code === 0) ran.push(...blocks);
      else {
        const failed = blocks[Math.max(run.lastBlock, 0)]!;
        ran.push(...blocks.slice(0, Math.max(run.lastBlock, 0)));
        failures.push(
          `${file}:${failed.line} failed (exit ${run.code}):\n${failed.source}\n--- stderr (end) ---\n${run.stderr.slice(-2_000)}\n--- stdout (end) ---\n${run.stdout.slice(-1_000)}`,
        );
      }
    }
    const skipped = [...examples.values()].flatMap((found) =>
      found.blocks.filter((b) => b.skip !== undefined),
    );
    console.log(
      `docs examples: ${ran.length} shell blocks ran (${answers} answers compared with the one shown), ${skipped.length} marked skip:\n${skipped
        .map((block) => `  ${block.file}:${block.line} — ${block.skip}`)
        .join("\n")}`,
    );
    expect(failures, failures.join("\n\n")).toEqual([]);
    expect(ran.length).toBeGreaterThan(0);
    expect(answers).toBeGreaterThan(0);
  }, 600_000);
});

describe("docs/openapi.json", () => {
  it("is what the started server answers at /openapi.json", async () => {
    const served = await (await fetch(`${server.base}/openapi.json`)).json();
    expect(served).toEqual(JSON.parse(text("docs/openapi.json")));
  });
});

describe("the docs' MCP client configurations", () => {
  /** What a client sends over Streamable HTTP; the token is the one `npm start` printed. */
  async function mcp(url: string, body: object, session?: string): Promise<Response> {
    return fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify(body),
    });
  }

  it("name the model chain (models=), and each URL opens a session whose tools/list answers", async () => {
    const urls = new Set(
      FILES.flatMap((file) => [
        ...text(file).matchAll(/http:\/\/127\.0\.0\.1:8787\/v1\/tenants\/[^"\s]+\/mcp\?[^"\s]+/g),
      ]).map((match) => match[0]),
    );
    expect(urls.size).toBeGreaterThan(0);
    for (const url of urls) {
      expect(new URL(url).searchParams.get("models"), url).toBeTruthy();
      const at = url.replace("127.0.0.1:8787", new URL(server.base).host);
      const opened = await mcp(at, initializeMessage("docs"));
      expect(opened.status, url).toBe(200);
      const session = opened.headers.get("mcp-session-id");
      expect(session, url).toBeTruthy();
      const listed = await mcp(at, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session!);
      const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
      expect(tools.map((tool) => tool.name)).toContain("tool_description");
    }
  });
});

describe("the docs' tool documents", () => {
  it("each yaml block that names its path (server-tools/…, mcp-servers/…, PUT T/tools/…) passes vance-tools lint", () => {
    const layer = mkdtempSync(join(tmpdir(), "vance-docs-layer-"));
    let shown = 0;
    try {
      // A page's documents go into one layer of their own: a pack finds the server shown above it.
      const problems = FILES.flatMap((file) => {
        const documents = shownDocuments(file, text(file));
        if (documents.length === 0) return [];
        shown += documents.length;
        const dir = join(layer, file.replace(/[/.]/g, "_"));
        for (const document of documents) {
          mkdirSync(join(dir, document.path, ".."), { recursive: true });
          writeFileSync(join(dir, document.path), document.yaml);
        }
        try {
          execFileSync(join(ROOT, "node_modules", ".bin", "vance-tools"), ["lint", dir], {
            encoding: "utf8",
          });
          return [];
        } catch (error) {
          const { stdout, stderr } = error as { stdout?: string; stderr?: string };
          const where = documents.map((document) => `${document.path} (${file}:${document.line})`).join(", ");
          return [`${where}:\n${stdout ?? ""}${stderr ?? ""}`];
        }
      });
      expect(problems).toEqual([]);
      expect(shown).toBeGreaterThanOrEqual(5);
    } finally {
      rmSync(layer, { recursive: true, force: true });
    }
  });
});

describe("the docs' inline commands", () => {
  const inline = [...examples.values()].flatMap((found) => found.inline);

  it("`npm run X` names a script of package.json", () => {
    const scripts = Object.keys((JSON.parse(text("package.json")) as { scripts: object }).scripts);
    const named = inline.flatMap(({ file, line, command }) => {
      const script = /^npm run (?:-s )?([\w:-]+)/.exec(command)?.[1];
      return script ? [{ where: `${file}:${line}`, script }] : [];
    });
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ script }) => !scripts.includes(script))).toEqual([]);
  });

  it("`vance-tools X` names a command of the CLI", () => {
    const help = execFileSync(join(ROOT, "node_modules", ".bin", "vance-tools"), ["--help"], {
      encoding: "utf8",
    });
    const commands = [...help.split("Commands:")[1]!.matchAll(/^ {2}(\w+)/gm)].map((match) => match[1]!);
    const named = inline.flatMap(({ file, line, command }) => {
      const name = /^(?:npx )?vance-tools (\w+)/.exec(command)?.[1];
      return name ? [{ where: `${file}:${line}`, name }] : [];
    });
    expect(commands).toContain("lint");
    expect(named.filter(({ name }) => !commands.includes(name))).toEqual([]);
  });
});

describe("the docs test itself", () => {
  it("finds a failing block, and says which one", async () => {
    const found = markdownExamples("x.md", '```sh\nX=1\n```\n\ntext\n\n```bash\ntest "$X" = 2\n```\n');
    expect(found.blocks.map((block) => block.line)).toEqual([1, 7]);
    const run = await runShell({
      blocks: found.blocks.map((block) => stepsOf(block.source)),
      cwd: tmpdir(),
      env: { PATH: process.env.PATH, VANCE_REPO: ROOT },
      timeoutMs: 10_000,
    });
    expect(run.code).not.toBe(0);
    expect(run.lastBlock).toBe(1);
  });

  it("compares a block's last answer with the one shown under it, … standing for what varies", async () => {
    const steps = stepsOf(
      'echo start\necho \'{"value":3,"durationMs":2.5}\'\n# → {"value":3,"durationMs":…}\necho after',
    );
    expect(steps.map((step) => step.expected)).toEqual(['{"value":3,"durationMs":…}', undefined]);
    const run = await runShell({
      blocks: [steps],
      cwd: tmpdir(),
      env: { PATH: process.env.PATH },
      timeoutMs: 10_000,
    });
    expect(run.code).toBe(0);
    const output = run.outputs.get("0.0")!;
    expect(showsAnswer(output, steps[0]!.expected!)).toBe(true);
    expect(showsAnswer(output, '{"value":4,"durationMs":…}')).toBe(false);
    expect(run.outputs.get("0.1")!.trim()).toBe("after");
  });

  it("takes a marked block out, and refuses a marker without a reason or without a block", () => {
    const found = markdownExamples(
      "x.md",
      "<!-- docs-test: skip — needs AWS credentials -->\n```sh\nnpx sst deploy\n```\n<!-- docs-test: skip -->\n\nprose\n",
    );
    expect(found.blocks).toEqual([
      { file: "x.md", line: 2, source: "npx sst deploy", skip: "needs AWS credentials" },
    ]);
    expect(found.problems).toEqual([
      "x.md:5: a docs-test skip marker must say why",
      "x.md:5: a docs-test marker with no shell block below it",
    ]);
  });
});
