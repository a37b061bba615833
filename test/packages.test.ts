import { execFile, execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceHost, serveService } from "./support/engine-host";
import { ensureNode22, NODE_22, NODE_22_SUPPORTED } from "./support/mcp-conformance";

/**
 * Published-package hygiene of `@vance/client` and `@vance/engine`: what `npm pack` puts in the
 * tarballs, that they import nothing of the service (only the OpenAPI document's generated
 * types are theirs), and that the packed packages load and typecheck in a consumer of their own —
 * on Node 20 (client, engine core, OpenAI and Anthropic builders) and Node 22 (the AI SDK adapter).
 */

const ROOT = process.cwd();
const PACKAGES = { client: "packages/client", engine: "packages/engine" } as const;
/** What each module may import: its runtime dependencies, its sibling package, and itself. */
const ALLOWED_IMPORTS = {
  client: ["openapi-fetch"],
  engine: ["@vance/client", "ai"],
} as const;

let work: string;
let consumer: string;
const packed: Record<string, string[]> = {};

function pack(dir: string): string[] {
  const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], {
    cwd: join(ROOT, dir),
    encoding: "utf8",
  });
  const [result] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  const target = join(consumer, "node_modules", "@vance", dir.split("/")[1]!);
  mkdirSync(target, { recursive: true });
  execFileSync("tar", ["-xzf", join(work, result!.filename), "-C", target, "--strip-components=1"]);
  return result!.files.map((file) => file.path).sort();
}

const importsOf = (source: string) =>
  [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^"'`;]*?from\s+["']([^"']+)["']/g)].map(
    (match) => match[1]!,
  );

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "vance-pack-"));
  consumer = join(work, "consumer");
  mkdirSync(join(consumer, "node_modules"), { recursive: true });
  execFileSync("npm", ["run", "build:packages"], { cwd: ROOT, stdio: "pipe" });
  packed.client = pack(PACKAGES.client);
  packed.engine = pack(PACKAGES.engine);
  // The consumer's other dependencies, as npm would install them.
  for (const name of [
    "openapi-fetch",
    "ai",
    "@ai-sdk",
    "@opentelemetry",
    "@standard-schema",
    "@vercel",
    "zod",
  ]) {
    const target = join(consumer, "node_modules", name);
    try {
      symlinkSync(resolve(ROOT, "node_modules", name), target);
    } catch {}
  }
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npm pack", () => {
  it("@vance/client packs its built modules with declarations, and nothing else", () => {
    const modules = ["client", "index", "openapi-types", "problems", "retry"];
    expect(packed.client).toEqual(
      [
        "README.md",
        ...modules.flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`]),
        "package.json",
      ].sort(),
    );
  });

  it("@vance/engine packs its built modules with declarations, and nothing else", () => {
    const modules = ["ai-sdk", "anthropic", "engine", "index", "openai", "provider-errors", "send"];
    expect(packed.engine).toEqual(
      [
        "README.md",
        ...modules.flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`]),
        "package.json",
      ].sort(),
    );
  });

  it("each depends on nothing of the service: its sources and its built modules import only what its package.json names", () => {
    for (const [name, dir] of Object.entries(PACKAGES) as [keyof typeof PACKAGES, string][]) {
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
      };
      const declared = [
        ...Object.keys(manifest.dependencies ?? {}),
        ...Object.keys(manifest.peerDependencies ?? {}),
      ];
      expect(declared.sort()).toEqual([...ALLOWED_IMPORTS[name]].sort());
      for (const folder of [join(ROOT, dir, "src"), join(consumer, "node_modules", "@vance", name, "dist")]) {
        for (const file of readdirSync(folder).filter((path) => /\.(ts|js)$/.test(path))) {
          const source = readFileSync(join(folder, file), "utf8");
          const external = importsOf(source).filter((specifier) => !specifier.startsWith("."));
          expect(
            external.filter((specifier) => !(ALLOWED_IMPORTS[name] as readonly string[]).includes(specifier)),
            `${folder}/${file}`,
          ).toEqual([]);
          // Edge runtimes have fetch, URL and Web Crypto, but no Node built-ins.
          expect(source, `${folder}/${file}`).not.toMatch(/\bnode:|\bBuffer\b|\bprocess\.env\b/);
        }
      }
    }
  });
});

describe("the packed packages in a consumer of their own", () => {
  let service: ServiceHost;

  beforeAll(async () => {
    service = await serveService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it("load on Node 20 and run a turn against the service: client, engine, OpenAI and Anthropic builders", async () => {
    const script = `
      import { createVanceClient } from "@vance/client";
      import { VanceEngine } from "@vance/engine";
      import { chatRequest } from "@vance/engine/openai";
      import { messagesRequest } from "@vance/engine/anthropic";
      const client = createVanceClient({ baseUrl: process.env.VANCE_URL, token: process.env.VANCE_TOKEN });
      const engine = new VanceEngine({ client, tenant: "acme", project: "packed" });
      const proc = await engine.spawn({ engineDefault: ["doc_getting_started"], models: [] });
      const chat = chatRequest(await proc.turn(), { model: "m", messages: [{ role: "user", content: "hi" }] });
      const messages = messagesRequest(await proc.turn({ format: "anthropic" }), { model: "m", max_tokens: 10, messages: [] });
      console.log(JSON.stringify({ chat: chat.tools.map((t) => t.function.name), anthropic: messages.tools.map((t) => t.name) }));
    `;
    // Asynchronously: the service answering it runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      cwd: consumer,
      env: { ...process.env, VANCE_URL: service.base, VANCE_TOKEN: service.token },
      encoding: "utf8",
    });
    const names = JSON.parse(stdout) as { chat: string[]; anthropic: string[] };
    expect(names.chat).toEqual(expect.arrayContaining(["tool_description", "tool_list"]));
    expect(names.anthropic).toEqual(names.chat);
  });

  it("typecheck in a consumer with NodeNext resolution through their declarations", () => {
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(
      join(consumer, "consumer.ts"),
      `import { createVanceClient, type ProblemCode, VanceApiError } from "@vance/client";
import { VanceEngine, type Turn } from "@vance/engine";
import { chatRequest, readChatCompletion } from "@vance/engine/openai";
import { vanceAiSdk } from "@vance/engine/ai-sdk";
const code: ProblemCode = "budget_floor_exceeded";
const client = createVanceClient({ baseUrl: "http://127.0.0.1:8787", token: () => "t" });
export async function run(turn: Turn<"openai">) {
  const engine = new VanceEngine({ client, tenant: "demo", project: "hello" });
  const proc = await engine.spawn({ models: ["openai/gpt-4.1"] });
  const request = chatRequest(turn, { model: "gpt-4.1", messages: [{ role: "user" as const, content: "hi" }] });
  const reply = readChatCompletion({ choices: [] });
  return [code, request.messages.length, reply.empty, vanceAiSdk, proc.processId, VanceApiError] as const;
}
`,
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const args = ["--noEmit", "--strict", "--module", "NodeNext", "--moduleResolution", "NodeNext"];
    args.push("--target", "ES2022", "--lib", "ES2023,DOM", "--skipLibCheck", "consumer.ts");
    execFileSync(process.execPath, [tsc, ...args], { cwd: consumer, encoding: "utf8" });
  }, 60_000);

  it.skipIf(!NODE_22_SUPPORTED)(
    "the AI SDK adapter loads on Node 22 with the ai package beside it",
    () => {
      ensureNode22();
      const out = execFileSync(
        NODE_22,
        [
          "--input-type=module",
          "-e",
          `const m = await import("@vance/engine/ai-sdk"); console.log(typeof m.vanceAiSdk);`,
        ],
        { cwd: consumer, encoding: "utf8" },
      );
      expect(out.trim()).toBe("function");
    },
    200_000,
  );
});
