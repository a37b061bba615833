import * as v from "valibot";

/**
 * Small text rules applied to what tenants and upstreams send. Each is a linear scan: none of
 * this text may meet a backtracking regex on the serving thread (README, *Isolation*).
 */

/** `text` without the runs of `char` at its start and/or end. */
export function trimChar(text: string, char: string, ends: "start" | "end" | "both" = "both"): string {
  let start = 0;
  let end = text.length;
  if (ends !== "end") while (start < end && text[start] === char) start++;
  if (ends !== "start") while (end > start && text[end - 1] === char) end--;
  return text.slice(start, end);
}

/**
 * Whether a UTF-16 unit is one no name, description or hint may carry: C0 controls but tab and
 * line feed (CR included: a description is one kind of line break), DEL, C1 controls, and the
 * bidirectional marks and overrides that make text read otherwise than it is stored (U+202E).
 */
function isControl(code: number): boolean {
  return (
    (code < 0x20 && code !== 0x09 && code !== 0x0a) ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** `text` without control characters (see `isControl`): what an upstream's descriptions become. */
export function stripControls(text: string): string {
  let result = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isControl(text.charCodeAt(i))) continue;
    result += text.slice(start, i);
    start = i + 1;
  }
  return start === 0 ? text : result + text.slice(start);
}

/**
 * Characters of an upstream's tool description (an OpenAPI operation's, an MCP server's tool's) a
 * tool keeps. A description reaches every listing, search and manifest of every process that may
 * call the tool, so an upstream's cannot be longer than a tenant could usefully write.
 */
export const MAX_UPSTREAM_DESCRIPTION_CHARS = 1_024;

/** An upstream's description as a tool shows it: without control characters, cut at {@link MAX_UPSTREAM_DESCRIPTION_CHARS}. */
export function upstreamDescription(text: string): string {
  const clean = stripControls(text);
  return clean.length > MAX_UPSTREAM_DESCRIPTION_CHARS
    ? `${clean.slice(0, MAX_UPSTREAM_DESCRIPTION_CHARS - 1)}…`
    : clean;
}

/** Why `text` may not be a description or hint (its first control character), or null. */
export function controlCharacterProblem(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isControl(code)) {
      return `contains the control character U+${code.toString(16).toUpperCase().padStart(4, "0")} at position ${i}; only tab and newline are allowed`;
    }
  }
  return null;
}

/** A valibot check: `field` holds no control characters (422 naming the first one). */
export function PlainText(field: string) {
  return v.check(
    (text: string) => controlCharacterProblem(text) === null,
    (issue) => {
      const problem = controlCharacterProblem(String(issue.input));
      return `${field} ${problem ?? "contains a control character"}`;
    },
  );
}
