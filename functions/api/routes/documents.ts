import {
  assertDocumentPath,
  type DocumentCascade,
  type ServerToolService,
  TENANT_PROJECT,
  toolNameFromPath,
  VanceError,
} from "@vance/core";
import { type Context, Hono } from "hono";
import { type AuthEnv, authenticate } from "../auth";
import { preconditions, requireDocumentContentType, textBody } from "../http";
import { toolView } from "./tools";

/** The document path addressed by the request: everything after `/documents/`, decoded. */
function documentPath(c: Context): string {
  const marker = "/documents/";
  const raw = c.req.path.slice(c.req.path.indexOf(marker) + marker.length);
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    throw new VanceError("invalid_id", 400, "the document path is not valid percent-encoding");
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

/** Any document of a layer (scripts, markdown, MCP server configs) under `/documents/{path}`. */
export function documentRoutes(cascade: DocumentCascade, tools: ServerToolService, secret: string) {
  const app = new Hono<AuthEnv>();

  app.get("/*", authenticate(secret, "read"), async (c) => {
    const { tenant, project } = c.req.param() as { tenant: string; project: string };
    const path = documentPath(c);
    const hit = await cascade.lookup(tenant, project, path);
    if (!hit) throw new VanceError("document_not_found", 404, `no document at '${path}'`);
    if (hit.etag) c.header("ETag", hit.etag);
    c.header("X-Vance-Layer", hit.layer);
    c.header("Content-Type", servedContentType(hit.contentType));
    return c.body(hit.body);
  });

  app.put("/*", authenticate(secret, "write"), async (c) => {
    const { tenant, project } = c.req.param() as { tenant: string; project: string };
    const path = documentPath(c);
    const contentType = requireDocumentContentType(c);
    const options = preconditions(c, contentType);
    const body = await textBody(c);
    if (path.startsWith("server-tools/")) {
      const name = toolNameFromPath(path);
      if (!name)
        throw new VanceError("invalid_id", 400, "tool documents are stored as server-tools/{name}.yaml");
      const { created, tool } = await tools.put(tenant, project, name, body, options);
      c.header("ETag", tool.etag ?? "");
      return c.json(toolView(tool), created ? 201 : 200);
    }
    const written = await cascade.upsert(tenant, project, path, body, options);
    c.header("ETag", written.etag);
    const layer = project === TENANT_PROJECT ? "tenant" : "project";
    return c.json({ path, layer, etag: written.etag }, written.created ? 201 : 200);
  });

  app.delete("/*", authenticate(secret, "write"), async (c) => {
    const { tenant, project } = c.req.param() as { tenant: string; project: string };
    await cascade.remove(tenant, project, documentPath(c), c.req.header("if-match")?.trim());
    return c.body(null, 204);
  });

  return app;
}
