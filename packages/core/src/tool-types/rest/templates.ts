import type { RestFailure } from "./errors";

/** `${secret:NAME}` or an `{input}` placeholder; one pass, so filled-in values are never re-expanded. */
const PLACEHOLDER = /\$\{secret:([A-Za-z0-9_.-]+)\}|\{([A-Za-z_$][A-Za-z0-9_$]*)\}/g;
const TEMPLATE = /\$\{secret:[A-Za-z0-9_.-]+\}|\{[A-Za-z_$][A-Za-z0-9_$]*\}/;
const WHOLE_INPUT = /^\{([A-Za-z_$][A-Za-z0-9_$]*)\}$/;
/** What the URL parser resolves as `.` or `..` (RFC 3986 §5.2.4, WHATWG "single/double-dot segment"). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** Marks a body template value whose input the call did not give: the member is left out. */
export const ABSENT = Symbol("absent");

/** Whether a filled-in path segment reads `.` or `..`, which the URL parser would resolve (so walk the upstream path). */
export function isDotSegment(text: string): boolean {
  return DOT_SEGMENT.test(text);
}

/** Whether `text` holds a placeholder (so it cannot be judged before it is filled). */
export function hasPlaceholder(text: string): boolean {
  return TEMPLATE.test(text);
}

/** Every `${secret:NAME}` the templates use, in template order (strings, arrays and objects walked). */
export function secretNames(templates: readonly unknown[]): string[] {
  const names = new Set<string>();
  const collect = (template: unknown): void => {
    if (typeof template === "string") {
      for (const match of template.matchAll(PLACEHOLDER)) if (match[1] !== undefined) names.add(match[1]);
    } else if (Array.isArray(template)) {
      for (const item of template) collect(item);
    } else if (typeof template === "object" && template !== null) {
      for (const item of Object.values(template)) collect(item);
    }
  };
  for (const template of templates) collect(template);
  return [...names];
}

/**
 * Fills templates for one call with the secrets already resolved, and records which inputs are
 * referenced (the rest go to query or body).
 */
export class TemplateFiller {
  private readonly referenced = new Set<string>();
  private readonly names: ReadonlySet<string>;

  /** `declared`: the tool's input names; a placeholder of any other name the call did not give stays as written. */
  constructor(
    declared: readonly string[],
    private readonly input: Readonly<Record<string, unknown>>,
    private readonly secrets: ReadonlyMap<string, string>,
  ) {
    this.names = new Set([...declared, ...Object.keys(input)]);
  }

  /** Interpolates a string; `absent` says it referenced an input the call did not give. */
  text(
    template: string,
    encode: (text: string) => string = (text) => text,
  ): { text: string; absent: boolean } {
    let absent = false;
    const text = template.replace(PLACEHOLDER, (whole, secretName?: string, inputName?: string) => {
      if (secretName !== undefined) return encode(this.secrets.get(secretName) ?? "");
      if (inputName === undefined || !this.names.has(inputName)) return whole;
      this.referenced.add(inputName);
      const value = this.input[inputName];
      if (value === undefined || value === null) {
        absent = true;
        return "";
      }
      return encode(stringify(value));
    });
    return { text, absent };
  }

  /** Fills a JSON body template: a string that is exactly `{input}` becomes the input's typed value. */
  json(template: unknown): unknown {
    if (typeof template === "string") {
      const name = WHOLE_INPUT.exec(template)?.[1];
      if (name === undefined || !this.names.has(name)) return this.text(template).text;
      this.referenced.add(name);
      return this.input[name] === undefined ? ABSENT : this.input[name];
    }
    if (Array.isArray(template)) {
      return template.map((item) => {
        const filled = this.json(item);
        return filled === ABSENT ? null : filled;
      });
    }
    if (typeof template === "object" && template !== null) {
      const entries = Object.entries(template).map(([key, item]) => [key, this.json(item)] as const);
      return Object.fromEntries(entries.filter(([, item]) => item !== ABSENT));
    }
    return template;
  }

  /** Inputs given to the call that no template mentions, in call order. */
  unreferencedInputs(): [string, unknown][] {
    return Object.entries(this.input).filter(
      ([name, value]) => !this.referenced.has(name) && value !== undefined,
    );
  }
}

/**
 * Fills the URL template, its path segment by segment: the URL parser would resolve a `.` or `..`
 * segment and so walk the upstream path, so a value that makes one is refused rather than sent.
 * (`/` in a value is already encoded.)
 */
export function fillUrl(template: string, templates: TemplateFiller): string | RestFailure {
  const fill = (part: string) => templates.text(part, encodeURIComponent).text;
  // The schema guarantees `http(s)://`; placeholders hold no `/`, `?` or `#`, so these split the template as they split the URL.
  const authority = template.indexOf("://") + 3;
  const authorityLength = template.slice(authority).search(/[/?#]/);
  // Without a path in the template the URL's path is `/`, whatever the values are.
  if (authorityLength === -1 || template[authority + authorityLength] !== "/") return fill(template);
  const pathStart = authority + authorityLength;
  const pathLength = template.slice(pathStart).search(/[?#]/);
  const pathEnd = pathLength === -1 ? template.length : pathStart + pathLength;
  const segments = template.slice(pathStart, pathEnd).split("/");
  const filled: string[] = [];
  for (const segment of segments) {
    const text = fill(segment);
    if (TEMPLATE.test(segment) && isDotSegment(text)) {
      return {
        error: "InvalidRequest",
        message: `a value would make the URL path segment '${segment}' read '${text}', which would change the upstream path; '.' and '..' are refused there`,
      };
    }
    filled.push(text);
  }
  return fill(template.slice(0, pathStart)) + filled.join("/") + fill(template.slice(pathEnd));
}

/** A value as it stands in a URL, header or query: strings as they are, objects as JSON. */
export function stringify(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
