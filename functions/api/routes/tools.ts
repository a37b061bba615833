import {
  InvocableToolNameSchema,
  type ResolvedTool,
  type ServerToolService,
  type ToolDispatcher,
  VanceError,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate } from "../auth";
import { preconditions, requireToolContentType, textBody } from "../http";
import { jsonBody } from "../json-body";

const InvokeBodySchema = v.strictObject({
  params: v.optional(v.unknown(), {}),
  allowedTools: v.optional(v.array(InvocableToolNameSchema)),
});

/** The tool as `GET T/tools/{name}` answers it. */
export function toolView(tool: ResolvedTool) {
  return {
    name: tool.name,
    layer: tool.layer,
    etag: tool.etag,
    config: tool.config,
    inputSchema: tool.inputSchema,
  };
}

function summary(tool: ResolvedTool) {
  const { name, type, description, primary, labels, enabled } = tool.config;
  return { name, type, description, layer: tool.layer, primary, labels, enabled };
}

/** Tool configuration CRUD under `/v1/tenants/{tenant}/projects/{project}/tools`. */
export function toolRoutes(tools: ServerToolService, dispatcher: ToolDispatcher, secret: string) {
  const app = new Hono<AuthEnv>();

  app.get("/", authenticate(secret, "read"), async (c) => {
    const { tenant, project } = c.req.param() as { tenant: string; project: string };
    const label = c.req.query("label");
    const list =
      label === undefined
        ? await tools.listAll(tenant, project)
        : await tools.findByLabel(tenant, project, label);
    return c.json({ tools: list.map(summary) });
  });

  app.get("/:name", authenticate(secret, "read"), async (c) => {
    const { tenant, project, name } = c.req.param() as { tenant: string; project: string; name: string };
    const tool = await tools.require(tenant, project, name);
    if (tool.etag) c.header("ETag", tool.etag);
    return c.json(toolView(tool));
  });

  app.put("/:name", authenticate(secret, "write"), async (c) => {
    const { tenant, project, name } = c.req.param() as { tenant: string; project: string; name: string };
    const contentType = requireToolContentType(c);
    const options = preconditions(
      c,
      contentType === "application/json" ? "application/json" : "application/yaml",
    );
    const { created, tool } = await tools.put(tenant, project, name, await textBody(c), options);
    c.header("ETag", tool.etag ?? "");
    return c.json(toolView(tool), created ? 201 : 200);
  });

  app.delete("/:name", authenticate(secret, "write"), async (c) => {
    const { tenant, project, name } = c.req.param() as { tenant: string; project: string; name: string };
    await tools.delete(tenant, project, name, c.req.header("if-match")?.trim());
    return c.body(null, 204);
  });

  app.post("/:name/invoke", authenticate(secret, "read"), async (c) => {
    const { tenant, project, name } = c.req.param() as { tenant: string; project: string; name: string };
    const body = await jsonBody(c, InvokeBodySchema);
    const result = await dispatcher.invoke({
      caller: { tenant, project },
      name,
      params: body.params,
      allowedTools: body.allowedTools ? new Set(body.allowedTools) : null,
    });
    return c.json(result);
  });

  app.all("/:name", () => {
    throw new VanceError("method_not_allowed", 405, "tools support GET, PUT and DELETE");
  });

  return app;
}
