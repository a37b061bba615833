/** What replaces a secret value wherever it would show. */
export const SCRUBBED = "***";

/** Secrets at least this long are also looked for base64-encoded and by their halves. */
const FRAGMENT_MIN_CHARS = 8;

/**
 * Removes the secret values a call used from everything the call answers: messages, and
 * successful results (every string and every key of a JSON value). Each value is matched in any
 * letter case, as is, URL-encoded, JSON-escaped and base64-encoded (standard and URL-safe, at any
 * of the three alignments inside a longer base64 text, as in a Basic credential), and by its
 * first or last half alone (an upstream that echoes a key cut short). What it cannot see: shorter
 * fragments, other encodings (hex, hashes, encryption) and a value split across strings.
 */
export class SecretScrubber {
  /** Lower-cased forms, longest first, so a secret that contains another is replaced whole. */
  private readonly forms: readonly string[];

  constructor(values: Iterable<string>) {
    const forms = [...values].flatMap((value) => [
      value,
      encodeURIComponent(value),
      JSON.stringify(value).slice(1, -1),
      ...(value.length >= FRAGMENT_MIN_CHARS ? [...base64Forms(value), ...halves(value)] : []),
    ]);
    this.forms = [...new Set(forms.map((form) => form.toLowerCase()))]
      .filter((form) => form !== "")
      .sort((a, b) => b.length - a.length);
  }

  /**
   * The text with every form of every secret replaced by `***`. One pass per form over the text
   * (`indexOf`), the matches merged and replaced once: linear in the text for each form.
   */
  text(text: string): string {
    if (this.forms.length === 0 || text === "") return text;
    const lower = text.toLowerCase();
    // Lower-casing keeps positions unless the text has one of the few letters it expands.
    const haystack = lower.length === text.length ? lower : text;
    const spans: [start: number, end: number][] = [];
    for (const form of this.forms) {
      for (let at = haystack.indexOf(form); at >= 0; at = haystack.indexOf(form, at + form.length)) {
        spans.push([at, at + form.length]);
      }
    }
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0]);
    let result = "";
    let copied = 0;
    for (const [start, end] of spans) {
      if (end <= copied) continue;
      if (start >= copied) result += `${text.slice(copied, start)}${SCRUBBED}`;
      copied = end;
    }
    return result + text.slice(copied);
  }

  /**
   * A copy of a JSON value with its strings and keys scrubbed. Iterative, so that an upstream's
   * deeply nested answer cannot exhaust the stack.
   */
  value(root: unknown): unknown {
    if (this.forms.length === 0) return root;
    const pending: [source: object, target: unknown[] | Record<string, unknown>][] = [];
    const copy = (item: unknown): unknown => {
      if (typeof item === "string") return this.text(item);
      if (typeof item !== "object" || item === null) return item;
      const target = Array.isArray(item) ? [] : {};
      pending.push([item, target]);
      return target;
    };
    const result = copy(root);
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [source, target] = next;
      if (Array.isArray(source)) {
        for (const item of source) (target as unknown[]).push(copy(item));
        continue;
      }
      for (const [key, item] of Object.entries(source)) {
        // defineProperty, so a `__proto__` key stays an own property as JSON.parse made it.
        Object.defineProperty(target, this.text(key), {
          value: copy(item),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return result;
  }
}

/**
 * The parts of the value's base64 that do not depend on what stands before or after it: for
 * each alignment inside a longer base64 text (0, 1 or 2 bytes before it), the characters that
 * only the value's bytes decide, in the standard and the URL-safe alphabet.
 */
function base64Forms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  const forms: string[] = [];
  for (const offset of [0, 1, 2]) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const encoded = btoa(String.fromCharCode(...padded));
    // Characters before the first whole group of the value's own bytes depend on the prefix;
    // those of the last, partial group on what follows.
    const from = offset === 0 ? 0 : 4;
    const whole = Math.floor(padded.length / 3) * 4;
    const core = encoded.slice(from, whole);
    if (core.length >= FRAGMENT_MIN_CHARS) forms.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return forms;
}

/** The value's first and last half (rounded up): an echo cut to a prefix or a suffix. */
function halves(value: string): string[] {
  const half = Math.ceil(value.length / 2);
  return half >= FRAGMENT_MIN_CHARS ? [value.slice(0, half), value.slice(value.length - half)] : [];
}
