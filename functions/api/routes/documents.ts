import {
  addressedLayer,
  assertDocumentPath,
  DocumentPathSchema,
  type DocumentService,
  documentPathProblem,
  SPEC_DOCUMENTS_DIR,
  VanceError,
} from "@vance/core";
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authorOf, need } from "../auth";
import { documentText, preconditions, requireDocumentContentType, textBody } from "../http";
import {
  DOCUMENT_WRITE_PROBLEMS,
  describe,
  documentRequest,
  jsonResponse,
  mediaResponse,
  type Operation,
  pathParam,
} from "../openapi";
import { DocumentWrittenSchema, LayerDocumentsSchema, ToolViewSchema } from "../responses";
import { ProjectPathSchema, params, query } from "../validate";
import { auditView, toolView } from "./tools";

/** The document path addressed by the request: everything after `/documents/`, decoded. */
function documentPath(c: Context): string {
  const marker = "/documents/";
  const raw = c.req.path.slice(c.req.path.indexOf(marker) + marker.length);
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    throw new VanceError("invalid_id", "the document path is not valid percent-encoding");
  }
  assertDocumentPath(path);
  return path;
}

/** Types a browser could render as active content are served as plain text: documents are tenant-written. */
function servedContentType(stored: string | undefined): string {
  const type = (stored ?? "").split(";")[0]!.trim().toLowerCase();
  const active = type === "" || type.includes("html") || type.includes("xml") || type.includes("svg");
  return active ? "text/plain; charset=utf-8" : stored!;
}

/** `{path}` is the rest of the URL (a wildcard), read by `documentPath`: no validator declares it. */
const DOCUMENT_PATH = [pathParam("path", DocumentPathSchema)];

const ListQuerySchema = v.object({
  // A prefix is a folder of document paths ("server-tools/"), so it follows the path rule.
  prefix: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (prefix) => prefix === "" || documentPathProblem(`${prefix}x`) === null,
        (issue) => `'${String(issue.input)}' is not a folder of document paths`,
      ),
      v.description("only paths starting with this folder, e.g. server-tools/"),
    ),
    "",
  ),
});
const WRITTEN = v.union([DocumentWrittenSchema, ToolViewSchema]);

/** The routes below as `/openapi.json` describes them (`{path}` is the rest of the URL). */
const DOCS = {
  list: {
    summary: "The documents of this layer alone (not the cascade), with their ETags (`vance-tools pull`)",
    tag: "documents",
    operationId: "listLayerDocuments",
    responses: { 200: jsonResponse("The layer's documents, sorted by path", LayerDocumentsSchema) },
    problems: { 400: ["invalid_id"] },
  },
  get: {
    summary: "A document resolved through the cascade, as stored (`ETag`, `X-Vance-Layer` and audit headers)",
    tag: "documents",
    parameters: DOCUMENT_PATH,
    responses: {
      200: {
        ...mediaResponse("The stored bytes, with their content type", "*/*"),
        headers: {
          "X-Vance-Layer": { description: "The layer that answered", schema: { type: "string" } },
          "X-Vance-Created-At": {
            description: "When the document was created (ISO-8601); absent where unknown",
            schema: { type: "string" },
          },
          "X-Vance-Created-By": {
            description:
              "The creating token's subject, percent-encoded (kept across updates); absent where unknown",
            schema: { type: "string" },
          },
          "X-Vance-Updated-At": {
            description: "When it was last written (ISO-8601); absent for bundled documents",
            schema: { type: "string" },
          },
          "X-Vance-Updated-By": {
            description: "The last writer's token subject, percent-encoded; absent where unknown",
            schema: { type: "string" },
          },
        },
      },
    },
    problems: { 404: ["document_not_found"] },
  },
  put: {
    summary: "Create or replace a document of this layer; server-tools/ paths are validated as tools",
    tag: "documents",
    parameters: DOCUMENT_PATH,
    body: documentRequest(["text/*", "application/yaml", "application/json", "application/javascript"]),
    responses: {
      200: jsonResponse("Replaced; a tool document answers as `GET T/tools/{name}`", WRITTEN),
      201: jsonResponse("Created; a tool document answers as `GET T/tools/{name}`", WRITTEN),
    },
    problems: DOCUMENT_WRITE_PROBLEMS,
  },
  delete: {
    summary: "Delete a document of this layer (`If-Match` honoured)",
    tag: "documents",
    parameters: DOCUMENT_PATH,
    responses: { 204: { description: "Deleted" } },
    problems: { 404: ["document_not_found"], 412: ["precondition_failed"] },
  },
} satisfies Record<string, Operation>;

/** Any document of a layer (scripts, markdown, MCP server configs) under `/documents/{path}`. */
export function documentRoutes(documents: DocumentService) {
  const app = new Hono<AuthEnv>();
  const projectPath = params(ProjectPathSchema);

  app.get(
    "/",
    describe(DOCS.list),
    need("read"),
    projectPath,
    query(ListQuerySchema, { code: "invalid_id" }),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      const listed = await documents.list(tenant, project, c.req.valid("query").prefix);
      return c.json({ layer: addressedLayer(project), documents: listed });
    },
  );

  app.get("/*", describe(DOCS.get), need("read"), projectPath, async (c) => {
    const { tenant, project } = c.req.valid("param");
    const hit = await documents.get(tenant, project, documentPath(c));
    if (hit.etag) c.header("ETag", hit.etag);
    c.header("X-Vance-Layer", hit.layer);
    const audit = auditView(hit.audit);
    if (audit.createdAt) c.header("X-Vance-Created-At", audit.createdAt);
    if (audit.createdBy) c.header("X-Vance-Created-By", encodeURIComponent(audit.createdBy));
    if (audit.updatedAt) c.header("X-Vance-Updated-At", audit.updatedAt);
    // Header values are ASCII: the subject is percent-encoded, as in a URL.
    if (audit.updatedBy) c.header("X-Vance-Updated-By", encodeURIComponent(audit.updatedBy));
    c.header("Content-Type", servedContentType(hit.contentType));
    return c.body(hit.body);
  });

  app.put("/*", describe(DOCS.put), need("write"), projectPath, async (c) => {
    const { tenant, project } = c.req.valid("param");
    const path = documentPath(c);
    const contentType = requireDocumentContentType(c);
    const options = { ...preconditions(c, contentType), ...authorOf(c.get("claims")) };
    // A spec is parsed only on the task worker (its pack's load): here it is stored as sent.
    const text = path.startsWith(SPEC_DOCUMENTS_DIR) ? await textBody(c) : await documentText(c);
    const written = await documents.put(tenant, project, path, text, options);
    if (written.kind === "tool") {
      c.header("ETag", written.tool.etag ?? "");
      return c.json(toolView(written.tool), written.created ? 201 : 200);
    }
    const { etag, layer } = written;
    c.header("ETag", etag);
    return c.json({ path, layer, etag, ...auditView(written.audit) }, written.created ? 201 : 200);
  });

  app.delete("/*", describe(DOCS.delete), need("write"), projectPath, async (c) => {
    const { tenant, project } = c.req.valid("param");
    await documents.remove(tenant, project, documentPath(c), c.req.header("if-match")?.trim());
    return c.body(null, 204);
  });

  return app;
}
