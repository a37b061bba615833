import type { ParserOptions } from "@readme/openapi-parser";
import { MAX_OPENAPI_SPEC_BYTES, parseYaml } from "@vance/core";

/** An OpenAPI 3.x document (JSON or YAML text) with every `$ref` resolved, or a rejection saying why. */
export type OpenApiParser = (text: string) => Promise<Readonly<Record<string, unknown>>>;

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
const MAX_REFS = 50_000;
/**
 * `$ref`s the document holds once each is replaced by what it points at, recursively (a ref back
 * into one being expanded is a cycle, counted once). Schemas that each reference the previous
 * one twice double this at every step: 31 of them in 1.8 KB expand past two billion, and the
 * parser's dereferencing walks every path.
 */
export const MAX_REF_EXPANSIONS = 200_000;

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
    const document = jsonDocument(text) ?? plainJson(yamlData(text));
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
    refuseRefExplosion(record);

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
 * A JSON document's value by `JSON.parse`, or undefined when the text is not JSON: JSON is YAML,
 * but the YAML parser takes 50 times as long over it (8.5 s for GitHub's 13 MB document).
 */
function jsonDocument(text: string): unknown {
  if (!/^\s*[{[]/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The YAML text's data; its length is bounded above (bytes), and this runs on the task worker. */
function yamlData(text: string): unknown {
  const parsed = parseYaml(text, Number.POSITIVE_INFINITY);
  if (!parsed.ok) {
    const first = parsed.errors[0];
    throw new Error(
      `the document is not valid YAML or JSON: ${first?.message ?? "unreadable"}${first?.line === undefined ? "" : ` (line ${first.line})`}`,
    );
  }
  return parsed.yaml.data;
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

/** Throws when the document's refs, expanded, pass {@link MAX_REF_EXPANSIONS}; each target is counted once (memoised). */
function refuseRefExplosion(document: Record<string, unknown>): void {
  const tooMany = () =>
    new Error(
      `the document's $refs expand to more than ${MAX_REF_EXPANSIONS} references (schemas that reference one another many times over)`,
    );
  const expanded = new Map<string, number>();
  const open = new Set<string>();
  const count = (value: unknown): number => {
    if (typeof value !== "object" || value === null) return 0;
    let total = 0;
    for (const [key, child] of Object.entries(value)) {
      total += key === "$ref" && typeof child === "string" ? 1 + expand(child) : count(child);
      if (total > MAX_REF_EXPANSIONS) throw tooMany();
    }
    return total;
  };
  const expand = (ref: string): number => {
    const known = expanded.get(ref);
    if (known !== undefined) return known;
    if (open.has(ref)) return 0;
    open.add(ref);
    const total = count(pointerTarget(document, ref));
    open.delete(ref);
    expanded.set(ref, total);
    return total;
  };
  try {
    count(document);
  } catch (error) {
    if (error instanceof RangeError) throw new Error("the document nests too deeply");
    throw error;
  }
}

/** What a local ref (`#/a/b`, a JSON pointer) points at, or undefined. */
function pointerTarget(document: unknown, ref: string): unknown {
  let target = document;
  for (const raw of ref.replace(/^#\/?/, "").split("/")) {
    if (raw === "") continue;
    const token = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof target !== "object" || target === null || !Object.hasOwn(target, token)) return undefined;
    target = (target as Record<string, unknown>)[token];
  }
  return target;
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
