/**
 * Bounds on the shape of JSON that tenants, callers and upstreams send. `JSON.parse` itself is
 * linear, but much of what follows it is not bounded by bytes alone: walks that recurse overflow
 * the stack on deep nesting (a 500 instead of an answer), and schema validation, scrubbing, zod
 * parsing and re-encoding cost per value — 5 MB of one-character keys are 400,000 of them.
 */
export interface JsonShapeLimits {
  /** Most nested arrays and objects around any value. */
  readonly maxDepth: number;
  /** Most values in all: every object, array, key, string, number, boolean and null counts one. */
  readonly maxValues: number;
}

/** Request bodies of the API and the answers of upstreams (`rest`, MCP, model endpoints). */
export const JSON_SHAPE_LIMITS: JsonShapeLimits = { maxDepth: 64, maxValues: 200_000 };

/**
 * Why a JSON text is deeper or has more values than `limits` allow, or null when it fits. A
 * single pass over the text that never builds a value and never recurses; it does not check
 * that the text is valid JSON (the parse that follows does), only counts what it would make.
 *
 * @example jsonShapeProblem("[[[1]]]", { maxDepth: 2, maxValues: 10 }) // "it nests deeper than 2 levels"
 */
export function jsonShapeProblem(text: string, limits: JsonShapeLimits = JSON_SHAPE_LIMITS): string | null {
  let depth = 0;
  let values = 0;
  const tooMany = `it has more than ${limits.maxValues} values (keys, strings, numbers, objects and arrays)`;
  // Whether the next significant character starts a value (after `[`, `,`, `:` or at the start).
  let expectValue = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    switch (code) {
      case 0x22: {
        // A string (a key too): skip to its closing quote, past escapes.
        for (i++; i < text.length; i++) {
          const inner = text.charCodeAt(i);
          if (inner === 0x5c) i++;
          else if (inner === 0x22) break;
        }
        if (++values > limits.maxValues) return tooMany;
        expectValue = false;
        break;
      }
      case 0x7b:
      case 0x5b:
        if (++depth > limits.maxDepth) return `it nests deeper than ${limits.maxDepth} levels`;
        if (++values > limits.maxValues) return tooMany;
        expectValue = true;
        break;
      case 0x7d:
      case 0x5d:
        depth--;
        expectValue = false;
        break;
      case 0x2c:
      case 0x3a:
        expectValue = true;
        break;
      case 0x20:
      case 0x09:
      case 0x0a:
      case 0x0d:
        break;
      default:
        // The first character of a number, `true`, `false` or `null`.
        if (expectValue && ++values > limits.maxValues) return tooMany;
        expectValue = false;
    }
  }
  return null;
}
