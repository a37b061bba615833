import { type ObservedToolLimits, type ToolBudgetService, VanceError } from "@vance/core";
import { Hono } from "hono";
import * as v from "valibot";
import { type AuthEnv, authenticate } from "../auth";
import { jsonBody } from "../json-body";

const ObservedLimitBodySchema = v.strictObject({
  model: v.string(),
  error: v.pipe(v.string(), v.minLength(1, "error must be the provider's error text")),
});

/** Tool budget of model chains and learning limits from rejections, under `/v1/models`. */
export function modelRoutes(deps: {
  budget: ToolBudgetService;
  observed: ObservedToolLimits;
  secret: string;
}) {
  const app = new Hono<AuthEnv>();

  // Any valid token: an engine asks this before every turn, whatever its roles.
  app.get("/budget", authenticate(deps.secret), async (c) => {
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
  app.post("/observed-limits", authenticate(deps.secret, "admin", { platformOnly: true }), async (c) => {
    const body = await jsonBody(c, ObservedLimitBodySchema);
    const maxTools = await deps.observed.learn(body.model, body.error);
    return c.json({ model: body.model, maxTools });
  });

  return app;
}
