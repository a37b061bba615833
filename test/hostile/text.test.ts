import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { RegExpParser } from "@eslint-community/regexpp";
import { countRequests } from "@vance/adapters/mcp";
import {
  builtInToolTypes,
  controlCharacterProblem,
  createNetworkPolicy,
  jsonSchemaSizeProblem,
  jsonShapeProblem,
  MAX_YAML_DOCUMENT_CHARS,
  parseCatalogDocument,
  parseMcpServerDocument,
  parseToolDocument,
  parseToolLimitFromError,
  parseYaml,
  SecretScrubber,
  stripControls,
  stripJsonFence,
  ToolTypeRegistry,
  trimChar,
} from "@vance/core";
import { analyse } from "scslre";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_BLOCK_MS } from "./support";

/** 200 KB of each shape that makes a backtracking pattern or a naive scan super-linear. */
const SIZE = 200 * 1024;
const fill = (unit: string, prefix = "", suffix = "") =>
  prefix + unit.repeat(Math.ceil((SIZE - prefix.length - suffix.length) / unit.length)) + suffix;
const ADVERSARIAL: Record<string, string> = {
  spaces: fill(" "),
  "tools + spaces": fill(" ", "tools"),
  "tools: repeated": fill("tools: "),
  "too many tools + digits": fill("1", "too many tools "),
  "maximum of + spaces": fill(" ", "maximum of 1"),
  "fence + blank lines": fill(" \n", "```json"),
  "fence, unclosed body": fill("`", "```json\n"),
  underscores: fill("_", "", "x"),
  capitals: fill("A", "", "a"),
  slashes: fill("/", "", "x"),
  "open brackets": fill("["),
  "open braces": fill('{"a":'),
  quotes: fill('\\"', '"'),
  "yaml dashes": fill("- "),
  "yaml keys": fill("a: "),
  "yaml anchors": fill("*a, ", "a: &a x\nb: [", "]"),
  "yaml aliases": fill("- *a\n", "a: &a x\nb:\n"),
  "control characters": fill("\u001b\u202e\r\u0000"),
  "base64-like": fill("QUJD"),
};

/** Every exported function of the service that reads text a tenant or an upstream wrote. */
const READERS: Record<string, (text: string) => unknown> = {
  parseToolLimitFromError,
  stripJsonFence,
  jsonShapeProblem: (text) => jsonShapeProblem(text),
  countRequests,
  parseYaml,
  parseToolDocument: (text) =>
    parseToolDocument(
      text,
      "probe",
      new ToolTypeRegistry(builtInToolTypes(), { networkPolicy: createNetworkPolicy([]) }),
    ),
  parseMcpServerDocument: (text) => parseMcpServerDocument(text, { networkPolicy: createNetworkPolicy([]) }),
  parseCatalogDocument: (text) => parseCatalogDocument("model/probe/_provider.yaml", text),
  stripControls,
  controlCharacterProblem,
  trimChar: (text) => trimChar(text, "_"),
  "SecretScrubber.text": (text) => new SecretScrubber(["sk-AAAAAAAAAAAAAAAA", "tools    tools"]).text(text),
  jsonSchemaSizeProblem: (text) => jsonSchemaSizeProblem({ description: text }, text.length),
};

describe("attack suite: text readers on 200 KB adversarial inputs", () => {
  const worst: { reader: string; input: string; ms: number }[] = [];

  afterAll(() => {
    worst.sort((a, b) => b.ms - a.ms);
    console.log(
      [
        `attack suite: ${Object.keys(READERS).length} text readers × ${Object.keys(ADVERSARIAL).length} inputs of 200 KB; slowest:`,
        ...worst.slice(0, 5).map((item) => `  ${item.reader}(${item.input}) ${item.ms.toFixed(1)} ms of CPU`),
      ].join("\n"),
    );
  });

  it.each(Object.entries(READERS))(
    "%s reads every adversarial input within the block bound",
    (name, read) => {
      // Whole, and cut to the largest YAML document the serving thread parses (the YAML readers
      // refuse longer ones at once, so the cut is what exercises their parser).
      const inputs = Object.entries(ADVERSARIAL).flatMap(([input, text]) => [
        [input, text],
        [`${input}, ${MAX_YAML_DOCUMENT_CHARS} chars`, text.slice(0, MAX_YAML_DOCUMENT_CHARS)],
      ]);
      for (const [input, text] of inputs as [string, string][]) {
        // The thread's CPU time, not the wall clock: a quadratic read costs seconds of CPU on any
        // machine, while on a loaded one (two suites on 2 cores, load ~17) a 300 ms read took
        // 1.3 s of wall time only by waiting for a core.
        const started = process.cpuUsage();
        try {
          read(text);
        } catch {
          // Refusing is an answer too; only the time matters here.
        }
        const spent = process.cpuUsage(started);
        const ms = (spent.user + spent.system) / 1000;
        worst.push({ reader: name, input, ms });
        expect(ms, `${name}(${input}), CPU ms`).toBeLessThan(MAX_BLOCK_MS);
      }
    },
  );
});

/**
 * The regex rule enforced on the source: every regular-expression literal of the code that serves
 * requests is checked by scslre for super-linear backtracking (what made `\s*:?\s*` quadratic),
 * and `new RegExp` is not used at all — a pattern over external text runs on RE2 or is a scan.
 * The CLI and the typed client run in their users' processes, never on the serving thread: not in scope.
 */
describe("attack suite: no backtracking pattern in the serving code", () => {
  const files = execFileSync(
    "git",
    ["ls-files", "packages/*/src/*.ts", "packages/*/src/**/*.ts", "functions/**/*.ts", "functions/**/*.tsx"],
    {
      encoding: "utf8",
    },
  )
    .split("\n")
    .filter(
      (file) =>
        file !== "" &&
        !file.endsWith(".test.ts") &&
        !file.startsWith("packages/cli/") &&
        !file.startsWith("packages/client/"),
    );

  it("finds the source files", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("has no regex literal that backtracks super-linearly, and no new RegExp", () => {
    const findings: string[] = [];
    let literals = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const source = ts.createSourceFile(
        file,
        text,
        ts.ScriptTarget.Latest,
        true,
        file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
      );
      const visit = (node: ts.Node): void => {
        if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
          literals++;
          const literal = node.getText(source);
          const { reports } = analyse(new RegExpParser().parseLiteral(literal), {});
          if (reports.length > 0)
            findings.push(`${file}: ${literal} (${reports.map((r) => r.type).join(", ")})`);
        } else if (ts.isNewExpression(node) && node.expression.getText(source) === "RegExp") {
          findings.push(`${file}: new RegExp(…)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(literals).toBeGreaterThan(30);
    expect(findings).toEqual([]);
  });

  it("would catch the pattern that froze the service", () => {
    const { reports } = analyse(
      new RegExpParser().parseLiteral(String.raw`/\b(?:tools|functions)["'\\]*\s*:?\s*array too long/i`),
      {},
    );
    expect(reports.length).toBeGreaterThan(0);
  });
});
