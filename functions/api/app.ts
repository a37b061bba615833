import { layerMarker, VanceError } from "@vance/core";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import type { AppServices } from "./app-services";
import { type AuthEnv, authentication, ENGINE, need } from "./auth";
import { limitBodies } from "./body-limits";
import { fastInvoke } from "./fast-invoke";
import { fastManifest } from "./fast-manifest";
import { fastProcessMcp } from "./fast-mcp";
import { serveFastRoutes } from "./fast-path";
import {
  describe,
  jsonResponse,
  mediaResponse,
  type OpenApiDocument,
  type Operation,
  openApiDocument,
  pathParam,
} from "./openapi";
import { problemResponse } from "./problem";
import { requestTelemetry } from "./request-log";
import { HealthSchema, MetricsSchema, ToolTypeSchema, ToolTypesSchema } from "./responses";
import { diagnosticRoutes } from "./routes/diagnostics";
import { documentRoutes } from "./routes/documents";
import { insightRoutes } from "./routes/insights";
import { mcpRoutes } from "./routes/mcp";
import { modelRoutes } from "./routes/models";
import { oauthRoutes } from "./routes/oauth";
import { processRoutes, recipeRoutes } from "./routes/processes";
import { projectRoutes } from "./routes/projects";
import { secretRoutes } from "./routes/secrets";
import { toolRoutes } from "./routes/tools";
import { docsPage } from "./ui/docs";
import { UI_CSP, uiRoutes } from "./ui/routes";
import { ProjectPathSchema, params } from "./validate";

/** The routes of this file as `/openapi.json` describes them. */
const DOCS = {
  health: {
    summary: "Liveness and version",
    tag: "meta",
    auth: false,
    responses: { 200: jsonResponse("ok", HealthSchema) },
  },
  openApi: {
    summary: "This document, generated from the routes' valibot schemas",
    tag: "meta",
    auth: false,
    responses: { 200: mediaResponse("OpenAPI 3.1", "application/json") },
  },
  docs: {
    summary: "The routes as an HTML page in the tool listing's style (no external assets; linked from /ui/)",
    tag: "meta",
    auth: false,
    responses: { 200: mediaResponse("HTML", "text/html") },
  },
  types: {
    summary: "Tool types with their parameters JSON Schema (any valid token)",
    tag: "types",
    responses: { 200: jsonResponse("The registered tool types", ToolTypesSchema) },
  },
  type: {
    summary: "One tool type with its parameters JSON Schema (any valid token)",
    tag: "types",
    parameters: [pathParam("typeId", { type: "string", description: "a typeId of `GET /v1/types`" })],
    responses: { 200: jsonResponse("The tool type", ToolTypeSchema) },
    problems: { 404: ["type_not_found"] },
  },
  metrics: {
    summary:
      "This instance's cache hits, misses and sizes, its generation reads and its script pool (a platform token)",
    tag: "meta",
    responses: { 200: jsonResponse("Counters since the instance started", MetricsSchema) },
  },
} satisfies Record<string, Operation>;

/** How the app is built besides its services. */
export interface AppOptions {
  /**
   * Answer the hot routes before Hono (`fast-path.ts`; default on). Off, every request takes its
   * Hono route — what the parity tests compare the fast routes with.
   */
  readonly fastRoutes?: boolean;
}

/** Builds the Hono app from injected services; the same app serves Lambda and the local server. */
export function createApp(services: AppServices, options: AppOptions = {}) {
  const { verifier } = services;
  const app = new Hono<AuthEnv>();

  app.onError((error) => problemResponse(error, (fields) => services.logger.warn("http.error", fields)));
  app.notFound(() => {
    throw new VanceError("not_found", "no such route; see /openapi.json");
  });
  app.use("*", requestTelemetry(services.logger));
  app.use("*", secureHeaders());
  app.use("*", limitBodies());
  // Authentication of /v1, mounted once: each route but /v1/health states what it needs (`need`).
  app.use("/v1/*", authentication(verifier));

  app.get("/v1/health", describe(DOCS.health), (c) => c.json({ status: "ok", version: services.version }));
  // Generated once, on first request: every route is registered by then.
  let document: Promise<OpenApiDocument> | undefined;
  const openApi = () => {
    document ??= openApiDocument(app, services.version);
    return document;
  };
  app.get("/openapi.json", describe(DOCS.openApi), async (c) => c.json(await openApi()));
  app.get("/docs", describe(DOCS.docs), async (c) => {
    c.header("content-security-policy", UI_CSP);
    return c.html(await docsPage(await openApi()));
  });
  app.get("/v1/types", describe(DOCS.types), need(undefined, ENGINE), (c) =>
    c.json({ types: services.types.describe() }),
  );
  app.get("/v1/types/:typeId", describe(DOCS.type), need(undefined, ENGINE), (c) => {
    const typeId = c.req.param("typeId");
    const type = services.types.describe().find((described) => described.typeId === typeId);
    if (!type) {
      const known = services.types.ids().join(", ");
      throw new VanceError("type_not_found", `no tool type '${typeId.slice(0, 80)}'; known types: ${known}`);
    }
    return c.json(type);
  });
  app.get("/v1/metrics", describe(DOCS.metrics), need(undefined, { platformOnly: true }), (c) =>
    c.json(services.metrics()),
  );

  // OAuth discovery for MCP clients (RFC 9728), and the development issuer while local tokens are on.
  app.route("/", oauthRoutes(verifier));

  // The read-only web listing (HTML); not part of /openapi.json.
  app.route("/ui", uiRoutes(services));

  app.route(
    "/v1/models",
    modelRoutes({
      budget: services.budget,
      observed: services.observedLimits,
      catalog: services.catalog,
      editor: services.catalogEditor,
    }),
  );

  app.route("/v1/tenants/:tenant/secrets", secretRoutes(services.secrets));
  app.route("/v1/tenants/:tenant/projects", projectRoutes(services.documents));

  const project = "/v1/tenants/:tenant/projects/:project";
  // A malformed tenant or project is 400 before the token is looked at.
  app.use(`${project}/*`, params(ProjectPathSchema));
  // A write the object store took stands even when the state store could not take its bump:
  // the answer says it is stored and its propagation to other instances pending (docs/http-api.md).
  // No validator here: one would document this hook as a route of its own in /openapi.json.
  // The ids were checked by the `params(ProjectPathSchema)` above, before any write ran.
  // Middleware (`use`), not a route of its own: `on(["PUT", "DELETE"], …)` would be one.
  const propagation = createMiddleware(async (c, next) => {
    await next();
    if (c.req.method !== "PUT" && c.req.method !== "DELETE") return;
    const { tenant, project: layerProject } = c.req.param() as { tenant: string; project: string };
    if (c.res.status < 300 && services.generations.isPending(layerMarker(tenant, layerProject))) {
      c.header("X-Vance-Propagation", "pending");
    }
  });
  app.use(`${project}/tools/*`, propagation);
  app.use(`${project}/documents/*`, propagation);
  app.route(`${project}/tools`, toolRoutes(services.tools, services.dispatcher));
  app.route(`${project}/documents`, documentRoutes(services.documents));
  app.route(`${project}/recipes`, recipeRoutes(services.recipes, services.tools));
  app.route(`${project}/processes`, processRoutes(services.processes));
  app.route(`${project}/insights`, insightRoutes(services.usage));
  app.route(`${project}/diagnostics`, diagnosticRoutes(services.diagnostics));
  app.route(
    project,
    mcpRoutes(services.processes, {
      version: services.version,
      settings: services.mcp,
      logger: services.logger,
    }),
  );
  if (options.fastRoutes !== false) {
    // An engine's every turn (the manifest and its MCP messages) and a tool invoked by name, answered before the middleware chain above.
    serveFastRoutes(
      app,
      [
        fastManifest(services.processes, verifier),
        fastProcessMcp(services.processes, verifier, { version: services.version, settings: services.mcp }),
        fastInvoke(services.tools, services.dispatcher, verifier),
      ],
      services.logger,
    );
  }
  return app;
}

export type VanceApp = ReturnType<typeof createApp>;
