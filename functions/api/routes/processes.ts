import {
  InvocableToolNameSchema,
  ProcessIdSchema,
  type ProcessService,
  RecipeEntrySchema,
  type RecipeResolver,
  type ServerToolService,
  SpawnRequestSchema,
} from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, ENGINE, need } from "../auth";
import { describe, jsonResponse, type Operation } from "../openapi";
import {
  InvocationSchema,
  ManifestSchema,
  ProcessRecordSchema,
  RecipeResolutionSchema,
  SpawnedProcessSchema,
} from "../responses";
import { commaListQuery, json, ProjectPathSchema, params, query } from "../validate";

const ResolveBodySchema = v.strictObject({
  engineDefault: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsAdd: v.optional(v.array(RecipeEntrySchema), []),
  allowedToolsRemove: v.optional(v.array(RecipeEntrySchema), []),
});

const ProcessInvokeBodySchema = v.strictObject({
  name: InvocableToolNameSchema,
  params: v.optional(v.unknown(), {}),
});

/** A process: its id as the store keeps process records (a bad one is 400 `invalid_id`). */
export const ProcessPathSchema = v.object({
  ...ProjectPathSchema.entries,
  id: v.pipe(ProcessIdSchema, v.description("the `processId` a spawn answered")),
});

/** A manifest's query: the wire format, the turn's skill tools, the version of the name lists held. */
export const ManifestQuerySchema = v.object({
  format: v.optional(
    v.pipe(
      v.picklist(["openai", "anthropic"], "format is openai or anthropic"),
      v.description("the tools' wire format"),
    ),
    "openai",
  ),
  with: v.optional(
    commaListQuery(
      "comma-separated skill tools added after classification (ranked keep), each in the allow set",
    ),
  ),
  names: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(64),
      v.description(
        "the `namesVersion` of an earlier answer for this process: when `deferred` and `demoted` are still those lists, they are left out of the answer",
      ),
    ),
  ),
});

const InvokeQuerySchema = v.object({
  with: v.optional(
    commaListQuery(
      "the turn's skill tools, as its manifest got them (?with=): the meta-tools then list them in context",
    ),
  ),
});

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  resolve: {
    summary: "(engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove, each @label expanded",
    tag: "processes",
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
    responses: {
      201: jsonResponse(
        "The process and its frozen allow set, with the packs whose source is not current and the entries that named nothing",
        SpawnedProcessSchema,
      ),
    },
    problems: { 422: ["budget_floor_exceeded"], 429: ["busy", "rate_limited", "quota_exceeded"] },
  },
  get: {
    summary: "The process record, activated tools included",
    tag: "processes",
    responses: { 200: jsonResponse("The record", ProcessRecordSchema) },
    problems: { 404: ["process_not_found"] },
  },
  end: {
    summary:
      "End a process: its record is deleted and its place among the tenant's live processes given back (`VANCE_QUOTA_LIVE_PROCESSES`)",
    tag: "processes",
    responses: { 204: { description: "Ended; later requests of the process answer 404" } },
    problems: { 404: ["process_not_found"] },
  },
  manifest: {
    summary: "This turn's tools (sorted), buckets, budget and discovery blocks",
    tag: "processes",
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
    responses: { 200: jsonResponse("The tool's outcome", InvocationSchema) },
    problems: {
      403: ["tool_not_allowed"],
      404: ["process_not_found", "tool_not_found", "tool_disabled"],
      422: ["invalid_params"],
      429: ["busy", "rate_limited"],
    },
  },
} satisfies Record<string, Operation>;

/** Recipe resolution under `T/recipes`. */
export function recipeRoutes(recipes: RecipeResolver, tools: Pick<ServerToolService, "snapshot">) {
  const app = new Hono<AuthEnv>();
  app.post(
    "/resolve",
    describe(DOCS.resolve),
    need("read", ENGINE),
    params(ProjectPathSchema),
    json(ResolveBodySchema),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      return c.json(await recipes.resolve(await tools.snapshot(tenant, project), c.req.valid("json")));
    },
  );
  return app;
}

/** Processes under `T/processes`: spawn, record, end, manifest, invoke. */
export function processRoutes(processes: ProcessService) {
  const app = new Hono<AuthEnv>();
  const engine = need("read", ENGINE);

  app.post(
    "/",
    describe(DOCS.spawn),
    engine,
    params(ProjectPathSchema),
    json(SpawnRequestSchema),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      const { record, stalePacks, warnings } = await processes.spawn(tenant, project, c.req.valid("json"));
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
    },
  );

  app.get("/:id", describe(DOCS.get), engine, params(ProcessPathSchema), async (c) => {
    const { tenant, project, id } = c.req.valid("param");
    return c.json(await processes.get(tenant, project, id));
  });

  app.delete("/:id", describe(DOCS.end), engine, params(ProcessPathSchema), async (c) => {
    const { tenant, project, id } = c.req.valid("param");
    await processes.end(tenant, project, id);
    return c.body(null, 204);
  });

  app.get(
    "/:id/manifest",
    describe(DOCS.manifest),
    engine,
    params(ProcessPathSchema),
    query(ManifestQuerySchema, { code: "invalid_format" }),
    async (c) => {
      const body = await manifestAnswer(processes, c.req.valid("param"), c.req.valid("query"));
      // Its length told up front: the request log need not count it.
      return c.body(body, 200, {
        "content-type": "application/json",
        "content-length": String(body.byteLength),
      });
    },
  );

  app.post(
    "/:id/invoke",
    describe(DOCS.invoke),
    engine,
    params(ProcessPathSchema),
    query(InvokeQuerySchema, { code: "validation_failed" }),
    json(ProcessInvokeBodySchema),
    async (c) => {
      const { tenant, project, id } = c.req.valid("param");
      const body = c.req.valid("json");
      const key = { tenant, project, processId: id };
      return c.json(await processes.invoke(key, body.name, body.params, c.req.valid("query").with ?? []));
    },
  );

  return app;
}

/**
 * The body of `GET …/processes/{id}/manifest` (200, `application/json`), as this route and its fast
 * route (`fast-manifest.ts`) send it: `c.json(manifest)` with `namesVersion`, byte for byte — wire
 * tools serialised once per tool, an unchanged manifest encoded once.
 */
export function manifestAnswer(
  processes: Pick<ProcessService, "manifestBody">,
  { tenant, project, id }: v.InferOutput<typeof ProcessPathSchema>,
  { format, with: additional, names }: v.InferOutput<typeof ManifestQuerySchema>,
): Promise<Uint8Array<ArrayBuffer>> {
  return processes.manifestBody({ tenant, project, processId: id }, format, additional ?? [], names);
}
