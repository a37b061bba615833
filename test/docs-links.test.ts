import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * README.md and docs/*.md link to each other, not to what a clone lacks: every relative link
 * names a file of the repository, every `#anchor` a heading of its file (GitHub's slugs).
 */

const ROOT = process.cwd();
const FILES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs")).flatMap((f) => (f.endsWith(".md") ? [`docs/${f}`] : [])),
];

/** The lines outside fenced blocks (blanked inside them), where Markdown links and headings live. */
function prose(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else lines.push(fenced ? "" : line);
  }
  return lines;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function linksOf(file: string): { line: number; target: string }[] {
  return prose(readFileSync(join(ROOT, file), "utf8")).flatMap((line, index) =>
    // Code spans hold no links (a regex such as `^[a-z]((?!--)…` would read as one).
    [...line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)].map((match) => ({
      line: index + 1,
      target: match[1]!,
    })),
  );
}

describe("README.md and docs/ links", () => {
  it("every relative link names a file inside the repository, and every anchor a heading of it", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of FILES) {
      for (const { line, target } of linksOf(file)) {
        if (/^[a-z]+:/.test(target)) continue;
        checked++;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const resolved = path === "" ? join(ROOT, file) : resolve(ROOT, dirname(file), path);
        const where = `${file}:${line} → ${target}`;
        if (relative(ROOT, resolved).startsWith("..")) broken.push(`${where}: outside the repository`);
        else if (!existsSync(resolved)) broken.push(`${where}: no such file`);
        else if (
          anchor &&
          resolved.endsWith(".md") &&
          !anchorsOf(readFileSync(resolved, "utf8")).has(anchor)
        ) {
          broken.push(`${where}: no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it("nothing names a file outside the repository (../shared/API.md and the like)", () => {
    const outside = FILES.flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((line, index) =>
          /(^|[\s`(])\.\.\/(?!my-engine\b)/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(outside).toEqual([]);
  });

  it("README.md stays a front door: at most 300 lines, starting with the two commands", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm install && npm test");
  });

  it("reads headings as GitHub anchors them", () => {
    expect([
      ...anchorsOf(
        "# MCP\n## Isolation: what a tenant can and cannot do to others\n## `prompt_template`\n## MCP\n",
      ),
    ]).toEqual(["mcp", "isolation-what-a-tenant-can-and-cannot-do-to-others", "prompt_template", "mcp-1"]);
  });
});
