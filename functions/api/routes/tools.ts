import {
  InvocableToolNameSchema,
  LabelSchema,
  type ObjectAudit,
  type PackSource,
  type ResolvedTool,
  ServerToolConfigSchema,
  type ServerToolService,
  type ToolDispatcher,
  ToolNameSchema,
  VanceError,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authorOf, need } from "../auth";
import { documentText, preconditions, requireToolContentType } from "../http";
import { DOCUMENT_WRITE_PROBLEMS, describe, documentRequest, jsonResponse, type Operation } from "../openapi";
import { InvocationSchema, ToolListSchema, ToolViewSchema } from "../responses";
import { json, ProjectPathSchema, params, query } from "../validate";

/** The body of `POST …/tools/{name}/invoke`. */
export const InvokeBodySchema = v.strictObject({
  params: v.optional(v.unknown(), {}),
  allowedTools: v.optional(v.array(InvocableToolNameSchema)),
});

/** A document's audit fields as the API answers them: null where unknown (bundled, built-in, written by hand). */
export function auditView(audit: ObjectAudit | null | undefined) {
  return {
    createdAt: audit?.createdAt ?? null,
    createdBy: audit?.createdBy ?? null,
    updatedAt: audit?.updatedAt ?? null,
    updatedBy: audit?.updatedBy ?? null,
  };
}

/** A pack document's source state as the API answers it. */
export function packStateView(pack: PackSource) {
  return {
    pack: pack.name,
    layer: pack.layer,
    status: pack.status,
    ...(pack.reason ? { reason: pack.reason } : {}),
    subTools: pack.subTools,
    leftOut: [...pack.notes],
  };
}

/** The tool as `GET T/tools/{name}` answers it; a pack document's with its source's state. */
export function toolView(tool: ResolvedTool, source?: PackSource | null) {
  return {
    name: tool.name,
    layer: tool.layer,
    etag: tool.etag,
    ...auditView(tool.audit),
    config: tool.config,
    inputSchema: tool.inputSchema,
    ...(tool.pack ? { pack: { name: tool.pack.name, sourceName: tool.pack.tool.sourceName } } : {}),
    ...(tool.stale ? { stale: true as const } : {}),
    ...(source ? { source: packStateView(source) } : {}),
  };
}

function summary(tool: ResolvedTool) {
  const { name, type, description, primary, labels, enabled } = tool.config;
  return {
    name,
    type,
    description,
    layer: tool.layer,
    primary,
    labels,
    enabled,
    ...auditView(tool.audit),
    ...(tool.pack ? { pack: tool.pack.name } : {}),
    ...(tool.pack?.tool.family ? { family: tool.pack.tool.family } : {}),
    ...(tool.stale ? { stale: true as const } : {}),
  };
}

/** A tool as it is called (pack sub-tools too), and as it is configured (a document of a layer). */
export const CalledNameSchema = v.object({ ...ProjectPathSchema.entries, name: InvocableToolNameSchema });
const ConfiguredNameSchema = v.object({ ...ProjectPathSchema.entries, name: ToolNameSchema });

const ListQuerySchema = v.object({
  label: v.optional(v.pipe(LabelSchema, v.description("only tools carrying this label"))),
});

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  list: {
    summary:
      "The merged cascade (built-in → bundled → tenant → project), disabled removed, sorted by name; with the tool documents it cannot offer and the packs whose source is not current",
    tag: "tools",
    responses: { 200: jsonResponse("The tools", ToolListSchema) },
    problems: { 400: ["invalid_id"] },
  },
  get: {
    summary: "First hit of project → tenant → bundled → built-in (pack sub-tools too)",
    tag: "tools",
    responses: {
      200: jsonResponse("The tool; `ETag` header for tenant and project documents", ToolViewSchema),
    },
    problems: { 404: ["tool_not_found", "tool_disabled"], 502: ["source_unavailable"] },
  },
  put: {
    summary: "Create or replace the tool document of this layer (the YAML is stored as sent)",
    tag: "tools",
    body: documentRequest(["application/yaml", "application/json"], ServerToolConfigSchema),
    responses: {
      200: jsonResponse("Replaced", ToolViewSchema),
      201: jsonResponse("Created", ToolViewSchema),
    },
    // Parsing compiles the document's schemas in its tenant's turn (`SCHEMA_COMPILE_SHARES`).
    problems: { ...DOCUMENT_WRITE_PROBLEMS, 429: ["busy", "rate_limited"] },
  },
  delete: {
    summary: "Delete the tool document of this layer (`If-Match` honoured)",
    tag: "tools",
    responses: { 204: { description: "Deleted" } },
    problems: { 404: ["tool_not_found"], 412: ["precondition_failed"] },
  },
  invoke: {
    summary: "Invoke a tool: its value, or its own failure as data",
    tag: "invocation",
    responses: { 200: jsonResponse("The tool's outcome", InvocationSchema) },
    problems: {
      403: ["tool_not_allowed"],
      404: ["tool_not_found", "tool_disabled"],
      422: ["invalid_params"],
      429: ["busy", "rate_limited"],
    },
  },
} satisfies Record<string, Operation>;

/**
 * What `POST …/tools/{name}/invoke` answers, its Hono route and its fast route (`fast-invoke.ts`)
 * alike: the tool's outcome, run in one snapshot of the project.
 */
export async function invokeAnswer(
  tools: Pick<ServerToolService, "snapshot">,
  dispatcher: Pick<ToolDispatcher, "invoke">,
  { tenant, project, name }: v.InferOutput<typeof CalledNameSchema>,
  body: v.InferOutput<typeof InvokeBodySchema>,
) {
  return dispatcher.invoke({
    caller: { tenant, project },
    name,
    params: body.params,
    allowedTools: body.allowedTools ? new Set(body.allowedTools) : null,
    // The call's one snapshot: its nested calls resolve in it too.
    snapshot: await tools.snapshot(tenant, project),
  });
}

/** Tool configuration CRUD under `/v1/tenants/{tenant}/projects/{project}/tools`. */
export function toolRoutes(tools: ServerToolService, dispatcher: ToolDispatcher) {
  const app = new Hono<AuthEnv>();

  app.get(
    "/",
    describe(DOCS.list),
    need("read"),
    params(ProjectPathSchema),
    query(ListQuerySchema, { code: "invalid_id" }),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      const { label } = c.req.valid("query");
      const listing = await (await tools.snapshot(tenant, project)).listing();
      const listed =
        label === undefined
          ? listing.tools
          : listing.tools.filter((tool) => tool.config.labels.includes(label));
      return c.json({
        tools: listed.map(summary),
        invalid: listing.invalid.map(({ path, layer, error }) => ({
          path,
          layer,
          message: error.message,
          errors: error.errors,
        })),
        stalePacks: listing.packs.flatMap((pack) =>
          pack.status === "current"
            ? []
            : [{ pack: pack.name, status: pack.status, reason: pack.reason ?? "" }],
        ),
        packs: listing.packs.map(packStateView),
      });
    },
  );

  app.get("/:name", describe(DOCS.get), need("read"), params(CalledNameSchema), async (c) => {
    const { tenant, project, name } = c.req.valid("param");
    // One snapshot for the request: the pack's source is read under it too.
    const snapshot = await tools.snapshot(tenant, project);
    const tool = await snapshot.require(name);
    if (tool.etag) c.header("ETag", tool.etag);
    const source = tool.pack ? null : await snapshot.packSource(name);
    return c.json(toolView(tool, source));
  });

  app.put("/:name", describe(DOCS.put), need("write"), params(ConfiguredNameSchema), async (c) => {
    const { tenant, project, name } = c.req.valid("param");
    const contentType = requireToolContentType(c);
    const options = {
      ...preconditions(c, contentType === "application/json" ? "application/json" : "application/yaml"),
      ...authorOf(c.get("claims")),
    };
    const { created, tool } = await tools.put(tenant, project, name, await documentText(c), options);
    c.header("ETag", tool.etag ?? "");
    return c.json(toolView(tool), created ? 201 : 200);
  });

  app.delete("/:name", describe(DOCS.delete), need("write"), params(ConfiguredNameSchema), async (c) => {
    const { tenant, project, name } = c.req.valid("param");
    await tools.delete(tenant, project, name, c.req.header("if-match")?.trim());
    return c.body(null, 204);
  });

  app.post(
    "/:name/invoke",
    describe(DOCS.invoke),
    need("read"),
    params(CalledNameSchema),
    json(InvokeBodySchema),
    async (c) => c.json(await invokeAnswer(tools, dispatcher, c.req.valid("param"), c.req.valid("json"))),
  );

  app.all("/:name", () => {
    throw new VanceError("method_not_allowed", "tools support GET, PUT and DELETE");
  });

  return app;
}
