import {
  InvocableToolNameSchema,
  type ProcessService,
  RecipeEntrySchema,
  type RecipeResolver,
  SpawnRequestSchema,
  VanceError,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate } from "../auth";
import { jsonBody } from "../json-body";

const ResolveBodySchema = v.strictObject({
  engineDefault: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsAdd: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsRemove: v.optional(v.array(RecipeEntrySchema), []),
});

const ProcessInvokeBodySchema = v.strictObject({
  name: InvocableToolNameSchema,
  params: v.optional(v.unknown(), {}),
});

type Params = { tenant: string; project: string };
type ProcessParams = Params & { id: string };

/** Recipe resolution under `T/recipes`. */
export function recipeRoutes(recipes: RecipeResolver, secret: string) {
  const app = new Hono<AuthEnv>();
  app.post("/resolve", authenticate(secret, "read"), async (c) => {
    const { tenant, project } = c.req.param() as Params;
    const body = await jsonBody(c, ResolveBodySchema);
    return c.json({ allowedTools: await recipes.resolve(tenant, project, body) });
  });
  return app;
}

/** Processes under `T/processes`: spawn, record, manifest, invoke. */
export function processRoutes(processes: ProcessService, secret: string) {
  const app = new Hono<AuthEnv>();

  app.post("/", authenticate(secret, "read"), async (c) => {
    const { tenant, project } = c.req.param() as Params;
    const record = await processes.spawn(tenant, project, await jsonBody(c, SpawnRequestSchema));
    return c.json({ processId: record.processId, allowedTools: record.allowedTools }, 201);
  });

  app.get("/:id", authenticate(secret, "read"), async (c) => {
    const { tenant, project, id } = c.req.param() as ProcessParams;
    return c.json(await processes.get(tenant, project, id));
  });

  app.get("/:id/manifest", authenticate(secret, "read"), async (c) => {
    const { tenant, project, id } = c.req.param() as ProcessParams;
    const format = c.req.query("format") ?? "openai";
    if (format !== "openai" && format !== "anthropic") {
      throw new VanceError("invalid_format", 400, "format is openai or anthropic");
    }
    const additional = (c.req.query("with") ?? "").split(",").filter(Boolean);
    return c.json(await processes.manifest({ tenant, project, processId: id }, format, additional));
  });

  app.post("/:id/invoke", authenticate(secret, "read"), async (c) => {
    const { tenant, project, id } = c.req.param() as ProcessParams;
    const body = await jsonBody(c, ProcessInvokeBodySchema);
    return c.json(await processes.invoke({ tenant, project, processId: id }, body.name, body.params));
  });

  return app;
}
