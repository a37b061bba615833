import { MAX_OPENAPI_SPEC_BYTES, parseYaml } from "@vance/core";

/**
 * An OpenAPI 3.x document (JSON or YAML text) as plain data, its `$ref`s in place (each one points
 * within it), or a rejection saying why.
 */
export type OpenApiParser = (text: string) => Promise<Readonly<Record<string, unknown>>>;

/** Options of {@link createOpenApiParser}. */
export interface OpenApiParserOptions {
  /** Texts longer than this (UTF-8 bytes) are refused before parsing; `MAX_OPENAPI_SPEC_BYTES` by default. */
  readonly maxBytes?: number;
}

/**
 * The `OpenApiParser` port: YAML or JSON text of an OpenAPI 3.x document, checked where calling
 * its operations depends on it (an object, OpenAPI 3.x, `info` with a title and a version, `paths`
 * an object whose keys start with `/`) and answered as a tree with its refs in place. Documents
 * are tenant input, so only refs inside the document (`#/…`) are allowed: a ref to a file or URL
 * is refused. Nothing is dereferenced here: `readOperations` resolves the refs each operation
 * reaches into the sub-tool's own `$defs`, so a document whose schemas refer to one another
 * thousands of times (Stripe, DocuSign, Microsoft Graph) costs each operation what it uses, and
 * the whole parse is linear in the text.
 *
 * @example
 * const document = await createOpenApiParser()("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}");
 */
export function createOpenApiParser(options: OpenApiParserOptions = {}): OpenApiParser {
  const maxBytes = options.maxBytes ?? MAX_OPENAPI_SPEC_BYTES;
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
    refuseMalformed(record);
    refuseExternalRefs(record);
    return record;
  };
}

/** Throws for what no operation could be read from: `info` without title or version, `paths` that are not paths. */
function refuseMalformed(document: Record<string, unknown>): void {
  const info = document.info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) {
    throw new Error("the document has no 'info' object (OpenAPI requires info.title and info.version)");
  }
  for (const field of ["title", "version"] as const) {
    if (typeof (info as Record<string, unknown>)[field] !== "string") {
      throw new Error(`the document's info.${field} must be a string`);
    }
  }
  const paths = document.paths;
  if (paths === undefined) return;
  if (typeof paths !== "object" || paths === null || Array.isArray(paths)) {
    throw new Error("the document's 'paths' must be an object");
  }
  const wrong = Object.keys(paths).find((path) => !path.startsWith("/"));
  if (wrong !== undefined) {
    throw new Error(`the document's path '${wrong.slice(0, 200)}' must begin with a slash`);
  }
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
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [value, path] = item;
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
      if ((key === "$ref" || key === "$dynamicRef") && typeof child === "string") {
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
