/** What replaces a secret value wherever it would show. */
export const SCRUBBED = "***";

/**
 * Removes the secret values a call used from everything the call answers: messages, and
 * successful results (every string and every key of a JSON value). Each value is matched as
 * is, URL-encoded and JSON-escaped, since an upstream may echo any of those forms.
 */
export class SecretScrubber {
  private readonly forms: readonly string[];

  constructor(values: Iterable<string>) {
    const forms = [...values].flatMap((value) => [
      value,
      encodeURIComponent(value),
      JSON.stringify(value).slice(1, -1),
    ]);
    // Longest first, so a secret that contains another is replaced whole.
    this.forms = [...new Set(forms)].filter((form) => form !== "").sort((a, b) => b.length - a.length);
  }

  /** The text with every form of every secret replaced by `***`. */
  text(text: string): string {
    let scrubbed = text;
    for (const form of this.forms) scrubbed = scrubbed.split(form).join(SCRUBBED);
    return scrubbed;
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
