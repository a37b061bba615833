import { type EmptyResponseDiagnosis, EmptyResponseReportSchema } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, ENGINE, need } from "../auth";
import { describe, jsonResponse, type Operation } from "../openapi";
import { EmptyResponseDiagnosisSchema } from "../responses";
import { json, ProjectPathSchema, params } from "../validate";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  emptyResponse: {
    summary:
      "Diagnose an empty model response (spec §13.2): which tool outside the tools array the conversation points at; fires once per requestId",
    tag: "insights",
    responses: { 200: jsonResponse("The finding", EmptyResponseDiagnosisSchema) },
  },
} satisfies Record<string, Operation>;

/** Diagnostics under `T/diagnostics`: the empty-response diagnosis an engine reports to. */
export function diagnosticRoutes(diagnosis: Pick<EmptyResponseDiagnosis, "diagnose">) {
  const app = new Hono<AuthEnv>();
  app.post(
    "/empty-response",
    describe(DOCS.emptyResponse),
    need("read", ENGINE),
    params(ProjectPathSchema),
    json(EmptyResponseReportSchema),
    async (c) => {
      const { tenant, project } = c.req.valid("param");
      return c.json(await diagnosis.diagnose(tenant, project, c.req.valid("json")));
    },
  );
  return app;
}
