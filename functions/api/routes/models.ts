import { type ObservedToolLimits, type ToolBudgetService, VanceError } from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate } from "../auth";
import { jsonBody } from "../json-body";
import { describe, jsonRequest, jsonResponse, type Operation, queryParam } from "../openapi";
import { ChainBudgetSchema, ObservedLimitSchema } from "../responses";

const ObservedLimitBodySchema = v.strictObject({
  model: v.string(),
  error: v.pipe(v.string(), v.minLength(1, "error must be the provider's error text")),
});

/** The routes below as `/openapi.json` describes them. */
const DOCS = {
  budget: {
    summary:
      "maxTools for a model chain: the minimum over the chain of catalog and observed limits (any valid token)",
    tag: "models",
    parameters: [queryParam("chain", v.string(), "comma-separated model ids, instance/slug", true)],
    responses: { 200: jsonResponse("The chain's budget", ChainBudgetSchema) },
    problems: { 400: ["invalid_model"] },
  },
  observedLimit: {
    summary: "Learn a model's tool limit from a provider's rejection text (admin, platform token)",
    tag: "models",
    body: jsonRequest(ObservedLimitBodySchema),
    responses: { 200: jsonResponse("The limit learned", ObservedLimitSchema) },
    problems: { 400: ["invalid_model"], 422: ["no_limit_in_error"] },
  },
} satisfies Record<string, Operation>;

/** Tool budget of model chains and learning limits from rejections, under `/v1/models`. */
export function modelRoutes(deps: {
  budget: ToolBudgetService;
  observed: ObservedToolLimits;
  secret: string;
}) {
  const app = new Hono<AuthEnv>();

  // Any valid token: an engine asks this before every turn, whatever its roles.
  app.get("/budget", describe(DOCS.budget), authenticate(deps.secret), async (c) => {
    const chain = (c.req.query("chain") ?? "")
      .split(",")
      .map((model) => model.trim())
      .filter(Boolean);
    if (chain.length === 0) {
      throw new VanceError(
        "invalid_model",
        400,
        "chain must name at least one model: ?chain=instance/slug,…",
      );
    }
    return c.json(await deps.budget.budgetForChain(chain));
  });

  // A learned limit cuts the manifests of every tenant, so only a platform admin may teach one.
  const platformAdmin = authenticate(deps.secret, "admin", { platformOnly: true });
  app.post("/observed-limits", describe(DOCS.observedLimit), platformAdmin, async (c) => {
    const body = await jsonBody(c, ObservedLimitBodySchema);
    const maxTools = await deps.observed.learn(body.model, body.error);
    return c.json({ model: body.model, maxTools });
  });

  return app;
}
