import {
  assertProjectId,
  assertTenantId,
  type DocumentCascade,
  type Logger,
  type ObservedToolLimits,
  type ProcessService,
  type RecipeResolver,
  type SecretService,
  type ServerToolService,
  type StateStore,
  type ToolBudgetService,
  type ToolDispatcher,
  type ToolTypeRegistry,
  VanceError,
} from "@vance/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";
import { type AuthEnv, authenticate } from "./auth";
import { docsPage, openApiDocument } from "./openapi";
import { problemResponse } from "./problem";
import { documentRoutes } from "./routes/documents";
import { insightRoutes } from "./routes/insights";
import { modelRoutes } from "./routes/models";
import { processRoutes, recipeRoutes } from "./routes/processes";
import { secretRoutes } from "./routes/secrets";
import { toolRoutes } from "./routes/tools";

/** Everything the HTTP API needs, built by one composition root per function. */
export interface AppServices {
  readonly version: string;
  readonly jwtSecret: string;
  readonly logger: Logger;
  readonly types: ToolTypeRegistry;
  readonly cascade: DocumentCascade;
  readonly tools: ServerToolService;
  readonly dispatcher: ToolDispatcher;
  readonly recipes: RecipeResolver;
  readonly processes: ProcessService;
  readonly state: StateStore;
  readonly secrets: SecretService;
  readonly budget: ToolBudgetService;
  readonly observedLimits: ObservedToolLimits;
}

/** Request bodies above this size are refused with 413 before they are read whole. */
export const MAX_BODY_BYTES = 256 * 1024;

const validIds = createMiddleware(async (c, next) => {
  assertTenantId(c.req.param("tenant") ?? "");
  assertProjectId(c.req.param("project") ?? "");
  await next();
});

/** Builds the Hono app from injected services; the same app serves Lambda and the local server. */
export function createApp(services: AppServices) {
  const { jwtSecret: secret } = services;
  const app = new Hono<AuthEnv>();

  app.onError((error) => problemResponse(error, (fields) => services.logger.warn("http.error", fields)));
  app.notFound(() => {
    throw new VanceError("not_found", 404, "no such route; see /openapi.json");
  });
  app.use("*", secureHeaders());
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new VanceError(
          "payload_too_large",
          413,
          `request bodies are limited to ${MAX_BODY_BYTES} bytes`,
        );
      },
    }),
  );

  app.get("/v1/health", (c) => c.json({ status: "ok", version: services.version }));
  app.get("/openapi.json", (c) => c.json(openApiDocument(services.version)));
  app.get("/docs", (c) => c.html(docsPage(services.version)));
  app.get("/v1/types", authenticate(secret), (c) => c.json({ types: services.types.describe() }));

  app.route(
    "/v1/models",
    modelRoutes({ budget: services.budget, observed: services.observedLimits, secret }),
  );

  app.route("/v1/tenants/:tenant/secrets", secretRoutes(services.secrets, secret));

  const project = "/v1/tenants/:tenant/projects/:project";
  app.use(`${project}/*`, validIds);
  app.route(`${project}/tools`, toolRoutes(services.tools, services.dispatcher, secret));
  app.route(`${project}/documents`, documentRoutes(services.cascade, services.tools, secret));
  app.route(`${project}/recipes`, recipeRoutes(services.recipes, secret));
  app.route(`${project}/processes`, processRoutes(services.processes, secret));
  app.route(`${project}/insights`, insightRoutes(services.state, secret));
  return app;
}

export type VanceApp = ReturnType<typeof createApp>;
