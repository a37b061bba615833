import {
  commaList,
  InvocableToolNameSchema,
  type ProcessService,
  RecipeEntrySchema,
  type RecipeResolver,
  SpawnRequestSchema,
  VanceError,
  type WireCache,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate, ENGINE, type TokenVerifier } from "../auth";
import { jsonBody } from "../json-body";
import {
  describe,
  jsonRequest,
  jsonResponse,
  type Operation,
  PROJECT_PARAMS,
  pathParam,
  queryParam,
} from "../openapi";
import { pathParams } from "../params";
import {
  InvocationSchema,
  ManifestSchema,
  ProcessRecordSchema,
  RecipeResolutionSchema,
  SpawnedProcessSchema,
} from "../responses";

const ResolveBodySchema = v.strictObject({
  engineDefault: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsAdd: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsRemove: v.optional(v.array(RecipeEntrySchema), []),
});

const ProcessInvokeBodySchema = v.strictObject({
  name: InvocableToolNameSchema,
  params: v.optional(v.unknown(), {}),
});

const PROCESS_PARAMS = [
  ...PROJECT_PARAMS,
  pathParam("id", { type: "string", description: "the `processId` a spawn answered" }),
];

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  resolve: {
    summary: "(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove, each @label expanded",
    tag: "processes",
    parameters: PROJECT_PARAMS,
    body: jsonRequest(ResolveBodySchema),
    responses: {
      200: jsonResponse(
        "The allow set, sorted: names and packs by reference, with the packs whose source is not current and the entries that named nothing",
        RecipeResolutionSchema,
      ),
    },
  },
  spawn: {
    summary: "Spawn a process: resolves the recipe once and freezes the allow set",
    tag: "processes",
    parameters: PROJECT_PARAMS,
    body: jsonRequest(SpawnRequestSchema),
    responses: {
      201: jsonResponse(
        "The process and its frozen allow set, with the packs whose source is not current and the entries that named nothing",
        SpawnedProcessSchema,
      ),
    },
    problems: { 422: ["budget_floor_exceeded"] },
  },
  get: {
    summary: "The process record, activated tools included",
    tag: "processes",
    parameters: PROCESS_PARAMS,
    responses: { 200: jsonResponse("The record", ProcessRecordSchema) },
    problems: { 404: ["process_not_found"] },
  },
  manifest: {
    summary: "This turn's tools (sorted), buckets, budget and discovery blocks",
    tag: "processes",
    parameters: [
      ...PROCESS_PARAMS,
      queryParam(
        "format",
        v.optional(v.picklist(["openai", "anthropic"]), "openai"),
        "the tools' wire format",
      ),
      queryParam(
        "with",
        v.string(),
        "comma-separated skill tools added after classification (ranked keep), each in the allow set",
      ),
    ],
    responses: { 200: jsonResponse("The manifest", ManifestSchema) },
    problems: {
      400: ["invalid_format"],
      403: ["tool_not_allowed"],
      404: ["process_not_found"],
      409: ["budget_floor_exceeded"],
    },
  },
  invoke: {
    summary: "Invoke inside the process (allow set, activation, usage); the meta-tools too",
    tag: "processes",
    parameters: [
      ...PROCESS_PARAMS,
      queryParam(
        "with",
        v.string(),
        "the turn's skill tools, as its manifest got them (?with=): the meta-tools then list them in context",
      ),
    ],
    body: jsonRequest(ProcessInvokeBodySchema),
    responses: { 200: jsonResponse("The tool's outcome", InvocationSchema) },
    problems: {
      403: ["tool_not_allowed"],
      404: ["process_not_found", "tool_not_found", "tool_disabled"],
      422: ["invalid_params"],
      429: ["busy"],
    },
  },
} satisfies Record<string, Operation>;

/** Recipe resolution under `T/recipes`. */
export function recipeRoutes(recipes: RecipeResolver, verifier: TokenVerifier) {
  const app = new Hono<AuthEnv>();
  app.post("/resolve", describe(DOCS.resolve), authenticate(verifier, "read", ENGINE), async (c) => {
    const { tenant, project } = pathParams(c, "tenant", "project");
    const body = await jsonBody(c, ResolveBodySchema);
    const resolved = await recipes.resolve(tenant, project, body);
    return c.json(resolved);
  });
  return app;
}

/** Processes under `T/processes`: spawn, record, manifest, invoke. */
export function processRoutes(
  processes: ProcessService,
  verifier: TokenVerifier,
  wire: Pick<WireCache, "body">,
) {
  const app = new Hono<AuthEnv>();

  app.post("/", describe(DOCS.spawn), authenticate(verifier, "read", ENGINE), async (c) => {
    const { tenant, project } = pathParams(c, "tenant", "project");
    const { record, stalePacks, warnings } = await processes.spawn(
      tenant,
      project,
      await jsonBody(c, SpawnRequestSchema),
    );
    return c.json(
      {
        processId: record.processId,
        allowedTools: record.allowedTools,
        allowedPacks: record.allowedPacks,
        excludedTools: record.excludedTools,
        stalePacks,
        warnings,
      },
      201,
    );
  });

  app.get("/:id", describe(DOCS.get), authenticate(verifier, "read", ENGINE), async (c) => {
    const { tenant, project, id } = pathParams(c, "tenant", "project", "id");
    return c.json(await processes.get(tenant, project, id));
  });

  app.get("/:id/manifest", describe(DOCS.manifest), authenticate(verifier, "read", ENGINE), async (c) => {
    const { tenant, project, id } = pathParams(c, "tenant", "project", "id");
    const format = c.req.query("format") ?? "openai";
    if (format !== "openai" && format !== "anthropic") {
      throw new VanceError("invalid_format", "format is openai or anthropic");
    }
    const additional = commaList(c.req.query("with"));
    const manifest = await processes.manifest({ tenant, project, processId: id }, format, additional);
    // `c.json(manifest)`, byte for byte: wire tools serialised once per tool, an unchanged manifest encoded once.
    return c.body(wire.body(manifest), 200, { "content-type": "application/json" });
  });

  app.post("/:id/invoke", describe(DOCS.invoke), authenticate(verifier, "read", ENGINE), async (c) => {
    const { tenant, project, id } = pathParams(c, "tenant", "project", "id");
    const body = await jsonBody(c, ProcessInvokeBodySchema);
    const skillTools = commaList(c.req.query("with"));
    return c.json(
      await processes.invoke({ tenant, project, processId: id }, body.name, body.params, skillTools),
    );
  });

  return app;
}
