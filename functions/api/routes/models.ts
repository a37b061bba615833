import {
  type CatalogEditor,
  catalogView,
  INSTANCE_PATTERN,
  type ModelCatalogService,
  type ObservedToolLimits,
  PLATFORM_SCOPE,
  type ToolBudgetService,
  VanceError,
} from "@vance/core";

/** A catalog file's name: `_provider` (PROVIDER_FILE) or a model slug (SLUG_PATTERN), spelled out as one linear literal. */
const CATALOG_FILE_PATTERN = /^(?:_provider|[A-Za-z0-9][A-Za-z0-9._-]{0,127})$/;

import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import * as v from "valibot";
import { type AuthEnv, ENGINE, need } from "../auth";
import { documentText, requireYamlOrJson } from "../http";
import { describe, documentRequest, jsonResponse, type Operation } from "../openapi";
import {
  CatalogDocumentSchema,
  CatalogWrittenSchema,
  ChainBudgetSchema,
  LearnedLimitsSchema,
  ModelCatalogSchema,
  ObservedLimitSchema,
} from "../responses";
import { commaListQuery, json, params, query } from "../validate";

const ObservedLimitBodySchema = v.strictObject({
  model: v.string(),
  error: v.pipe(v.string(), v.minLength(1, "error must be the provider's error text")),
});

/** A catalog document's path, `model/{instance}/{file}.yaml`. */
const DocumentPathSchema = v.object({
  instance: v.pipe(
    v.string(),
    v.regex(INSTANCE_PATTERN),
    v.description("the catalog instance (the endpoint), e.g. openai, cortecs"),
  ),
  file: v.pipe(
    v.string(),
    v.regex(CATALOG_FILE_PATTERN),
    v.description("`_provider` (the instance's defaults) or a model slug"),
  ),
});

const CHAIN_REQUIRED = "chain must name at least one model: ?chain=instance/slug,…";
const BudgetQuerySchema = v.object(
  {
    chain: v.pipe(
      commaListQuery("comma-separated model ids, instance/slug"),
      v.check((chain) => chain.length > 0, CHAIN_REQUIRED),
    ),
  },
  CHAIN_REQUIRED,
);

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  catalog: {
    summary: "The compiled model catalog: providers with wireType, maxTools, baseUrl and their models",
    tag: "models",
    responses: { 200: jsonResponse("The catalog", ModelCatalogSchema) },
  },
  putDocument: {
    summary:
      "Create or replace a catalog document (platform admin); validated, stored, and the compiled catalog rebuilt before the answer",
    tag: "models",
    body: documentRequest(["application/yaml", "application/json"], CatalogDocumentSchema),
    responses: {
      200: jsonResponse("Replaced; the instance as the rebuilt catalog shows it", CatalogWrittenSchema),
      201: jsonResponse("Created; the instance as the rebuilt catalog shows it", CatalogWrittenSchema),
    },
    problems: { 400: ["invalid_id"], 422: ["validation_failed"] },
  },
  deleteDocument: {
    summary:
      "Delete a stored catalog document (platform admin); a bundled one at the same path applies again",
    tag: "models",
    responses: { 204: { description: "Deleted; the compiled catalog is rebuilt" } },
    problems: { 400: ["invalid_id"], 404: ["document_not_found"] },
  },
  budget: {
    summary:
      "maxTools for a model chain: the minimum over the chain of catalog and observed limits (any valid token; a tenant token includes that tenant's own observations)",
    tag: "models",
    responses: { 200: jsonResponse("The chain's budget", ChainBudgetSchema) },
    problems: { 400: ["invalid_model"] },
  },
  observedLimit: {
    summary:
      "Learn an endpoint's tool limit from a provider's rejection text: a platform admin's binds every tenant, a tenant's read token binds that tenant's processes",
    tag: "models",
    responses: { 200: jsonResponse("The limit learned", ObservedLimitSchema) },
    problems: { 400: ["invalid_model"], 422: ["no_limit_in_error", "budget_floor_exceeded"] },
  },
  listObservedLimits: {
    summary:
      "The learned tool limits (admin): a platform admin sees every scope's, a tenant's admin its tenant's own",
    tag: "models",
    responses: { 200: jsonResponse("The learned limits, by scope and endpoint", LearnedLimitsSchema) },
  },
  withdrawObservedLimit: {
    summary:
      "Withdraw a learned limit (admin): scope `*` takes a platform admin, a tenant's scope that tenant's admin or a platform admin",
    tag: "models",
    responses: { 204: { description: "Withdrawn; every instance stops applying it" } },
    problems: { 400: ["invalid_id"], 404: ["not_found"] },
  },
} satisfies Record<string, Operation>;

/** The caller's tenant when the token is a tenant's, else undefined (a platform token). */
function tenantOf(c: Context<AuthEnv>): string | undefined {
  const { tenant } = c.get("claims");
  return tenant === PLATFORM_SCOPE ? undefined : tenant;
}

/** A learned limit's scope: `*` or a tenant id (`ID_PATTERN`), one linear literal. */
const LIMIT_SCOPE_PATTERN = /^(?:\*|[a-z0-9][a-z0-9_-]{0,62})$/;

const LimitPathSchema = v.object({
  scope: v.pipe(
    v.string(),
    v.regex(LIMIT_SCOPE_PATTERN, "scope must be '*' or a tenant id"),
    v.description("`*` (the platform's limit) or a tenant id"),
  ),
  instance: v.pipe(
    v.string(),
    v.regex(INSTANCE_PATTERN),
    v.description("the catalog instance (the endpoint)"),
  ),
});

/**
 * The scope of learned limits `c`'s admin may see and withdraw: `*` (all) for a platform admin,
 * else its own tenant's. 403 without the `admin` role.
 */
function adminScope(c: Context<AuthEnv>): string {
  if (!c.get("claims").roles.includes("admin")) {
    throw new VanceError("forbidden", "learned limits are listed and withdrawn with the 'admin' role");
  }
  return tenantOf(c) ?? PLATFORM_SCOPE;
}

/** Who may report a rejection (`POST /observed-limits`), judged before its body is read. */
const reporter = createMiddleware<AuthEnv>(async (c, next) => {
  const { roles } = c.get("claims");
  const tenant = tenantOf(c);
  if (!roles.includes(tenant === undefined ? "admin" : "read")) {
    throw new VanceError(
      "forbidden",
      tenant === undefined
        ? "a platform report changes every tenant's budget and needs the 'admin' role"
        : "reporting a rejection needs the 'read' role",
    );
  }
  await next();
});

/** The model catalog, the tool budget of model chains and limits learned from rejections, under `/v1/models`. */
export function modelRoutes(deps: {
  budget: ToolBudgetService;
  observed: ObservedToolLimits;
  catalog: Pick<ModelCatalogService, "begin">;
  editor: CatalogEditor;
}) {
  const app = new Hono<AuthEnv>();
  // Catalog writes change every tenant's budget: a platform admin's.
  const platformAdmin = need("admin", { platformOnly: true });

  app.get("/", describe(DOCS.catalog), need("read"), async (c) =>
    c.json(catalogView(await deps.catalog.begin().catalog())),
  );

  // Any valid token: an engine asks this before every turn, whatever its roles.
  app.get(
    "/budget",
    describe(DOCS.budget),
    need(undefined, ENGINE),
    query(BudgetQuerySchema, { code: "invalid_model" }),
    async (c) => {
      const tenant = tenantOf(c);
      const { chain } = c.req.valid("query");
      return c.json(
        await deps.budget.budgetForChain(chain, {
          ...(tenant === undefined ? {} : { tenant }),
          catalog: deps.catalog.begin(),
        }),
      );
    },
  );

  // A platform report cuts every tenant's manifests, so it takes a platform admin; a tenant's
  // engine reports with its read token, and its report cuts only its own tenant's.
  app.post(
    "/observed-limits",
    describe(DOCS.observedLimit),
    need(undefined, ENGINE),
    reporter,
    json(ObservedLimitBodySchema),
    async (c) => {
      const tenant = tenantOf(c);
      const body = c.req.valid("json");
      const maxTools = await deps.observed.learn(body.model, body.error, tenant ?? PLATFORM_SCOPE);
      return c.json({ model: body.model, maxTools });
    },
  );

  app.get("/observed-limits", describe(DOCS.listObservedLimits), need(), async (c) => {
    const limits = await deps.observed.list(adminScope(c));
    return c.json({
      limits: limits.map((limit) => ({ ...limit, observedAt: new Date(limit.observedAt).toISOString() })),
    });
  });

  app.delete(
    "/observed-limits/:scope/:instance",
    describe(DOCS.withdrawObservedLimit),
    need(),
    params(LimitPathSchema),
    async (c) => {
      const reach = adminScope(c);
      const { scope, instance } = c.req.valid("param");
      if (reach !== PLATFORM_SCOPE && scope !== reach) {
        throw new VanceError(
          "forbidden",
          scope === PLATFORM_SCOPE
            ? "the platform's learned limits are withdrawn by a platform admin (tenant '*')"
            : `a token of tenant '${reach}' withdraws only its own tenant's learned limits`,
        );
      }
      if (!(await deps.observed.withdraw(scope, instance))) {
        throw new VanceError("not_found", `no limit learned for '${instance}' in scope '${scope}'`);
      }
      return c.body(null, 204);
    },
  );

  app.put(
    "/:instance/:file",
    describe(DOCS.putDocument),
    platformAdmin,
    params(DocumentPathSchema),
    async (c) => {
      const { instance, file } = c.req.valid("param");
      requireYamlOrJson(c, "a catalog document");
      const body = await documentText(c);
      const { created, provider } = await deps.editor.put(instance, file, body);
      return c.json({ path: `model/${instance}/${file}.yaml`, provider }, created ? 201 : 200);
    },
  );

  app.delete(
    "/:instance/:file",
    describe(DOCS.deleteDocument),
    platformAdmin,
    params(DocumentPathSchema),
    async (c) => {
      const { instance, file } = c.req.valid("param");
      await deps.editor.delete(instance, file);
      return c.body(null, 204);
    },
  );

  return app;
}
