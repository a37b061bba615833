import type { ParserOptions } from "@readme/openapi-parser";
import { MAX_OPENAPI_SPEC_BYTES, type OpenApiParser, parseYaml } from "@vance/core";

/** Options of {@link createOpenApiParser}. */
export interface OpenApiParserOptions {
  /** Texts longer than this (UTF-8 bytes) are refused before parsing; `MAX_OPENAPI_SPEC_BYTES` by default. */
  readonly maxBytes?: number;
  /** Bounds resolving the document's `$ref`s; 5 s by default. */
  readonly timeoutMs?: number;
}

/** How much of the validator's report a rejection quotes. */
const MAX_MESSAGE_CHARS = 1_000;
/** `$ref`s a document may hold in all; each one is walked and resolved. */
const MAX_REFS = 10_000;

/**
 * The `OpenApiParser` port on `@readme/openapi-parser`: YAML or JSON text of an OpenAPI 3.x
 * document, validated against its specification and answered with every `$ref` resolved.
 * Documents are tenant input, so only refs inside the document (`#/…`) are followed: a ref to a
 * file or URL is refused before the parser sees it (it would read the file or fetch the URL).
 * A recursive schema becomes a cyclic object graph (a ref left in place would hide every schema
 * that reaches the cycle: the parser's `circular: "ignore"` leaves all of those unresolved), and
 * shared subtrees are the same object: readers walk it with a cycle check and a budget.
 *
 * @example
 * const document = await createOpenApiParser()("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}");
 */
export function createOpenApiParser(options: OpenApiParserOptions = {}): OpenApiParser {
  const maxBytes = options.maxBytes ?? MAX_OPENAPI_SPEC_BYTES;
  const parserOptions: ParserOptions = {
    dereference: { circular: true },
    resolve: { external: false, file: false },
    timeoutMs: options.timeoutMs ?? 5_000,
    validate: {
      // Neither matters to calling the operations; a document with them is still usable.
      rules: { openapi: { "array-without-items": "warning", "path-parameters-not-in-path": "warning" } },
    },
  };

  return async (text) => {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxBytes) {
      throw new Error(`the document has ${bytes} bytes; at most ${maxBytes} are accepted`);
    }
    const parsed = parseYaml(text);
    if (!parsed.ok) {
      const first = parsed.errors[0];
      throw new Error(
        `the document is not valid YAML or JSON: ${first?.message ?? "unreadable"}${first?.line === undefined ? "" : ` (line ${first.line})`}`,
      );
    }
    const document = plainJson(parsed.yaml.data);
    if (typeof document !== "object" || document === null || Array.isArray(document)) {
      throw new Error("the document is not an object");
    }
    const record = document as Record<string, unknown>;
    if (record.swagger !== undefined) {
      throw new Error("Swagger 2.0 documents are not supported; convert the document to OpenAPI 3");
    }
    if (typeof record.openapi !== "string" || !/^3\.\d+/.test(record.openapi)) {
      throw new Error(
        "the document is not OpenAPI 3.x (its 'openapi' field must be a version such as 3.1.0)",
      );
    }
    refuseExternalRefs(record);

    // Loaded at the first document, not at every cold start: the parser and the OpenAPI
    // schemas it validates against are a tenth of the API's bundle.
    const { compileErrors, dereference, validate } = await import("@readme/openapi-parser");
    // `validate` resolves refs in place, so it gets its own copy.
    const result = await validate(structuredClone(record) as never, parserOptions);
    if (!result.valid) throw new Error(bounded(compileErrors(result)));
    return (await dereference(record as never, parserOptions)) as Record<string, unknown>;
  };
}

/**
 * Throws for the first `$ref` that leaves the document. Iterative, so that a deeply nested
 * document cannot exhaust the stack.
 */
function refuseExternalRefs(document: Record<string, unknown>): void {
  const pending: [value: unknown, path: string][] = [[document, ""]];
  let refs = 0;
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [value, path] = item;
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if ((key === "$ref" || key === "$dynamicRef") && typeof child === "string") {
        if (++refs > MAX_REFS) throw new Error(`the document has more than ${MAX_REFS} $refs`);
        if (!child.startsWith("#")) {
          throw new Error(
            `the $ref '${child.slice(0, 200)}' at ${childPath || "/"} leaves the document; only refs within it (#/…) are followed`,
          );
        }
      } else {
        pending.push([child, childPath]);
      }
    }
  }
}

/**
 * The parsed YAML as a JSON tree: a YAML alias may make a node contain itself, which no JSON
 * document can, and the walks that follow expect a tree.
 */
function plainJson(data: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(data)) as unknown;
  } catch (error) {
    const reason =
      error instanceof RangeError ? "it nests too deeply" : "it contains itself (a recursive YAML alias)";
    throw new Error(`the document is not a JSON value: ${reason}`);
  }
}

function bounded(message: string): string {
  const text = message.trim();
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}
