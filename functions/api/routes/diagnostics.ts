import { type EmptyResponseDiagnosis, EmptyResponseReportSchema } from "@vance/core";
import { Hono } from "hono";
import { type AuthEnv, authenticate, ENGINE, type TokenVerifier } from "../auth";
import { jsonBody } from "../json-body";
import { describe, jsonRequest, jsonResponse, type Operation, PROJECT_PARAMS } from "../openapi";
import { pathParams } from "../params";
import { EmptyResponseDiagnosisSchema } from "../responses";

/** The route below as `/openapi.json` describes it. */
const DOCS = {
  emptyResponse: {
    summary:
      "Diagnose an empty model response (spec §13.2): which tool outside the tools array the conversation points at; fires once per requestId",
    tag: "insights",
    parameters: PROJECT_PARAMS,
    body: jsonRequest(EmptyResponseReportSchema),
    responses: { 200: jsonResponse("The finding", EmptyResponseDiagnosisSchema) },
  },
} satisfies Record<string, Operation>;

/** Diagnostics under `T/diagnostics`: the empty-response diagnosis an engine reports to. */
export function diagnosticRoutes(
  diagnosis: Pick<EmptyResponseDiagnosis, "diagnose">,
  verifier: TokenVerifier,
) {
  const app = new Hono<AuthEnv>();
  app.post(
    "/empty-response",
    describe(DOCS.emptyResponse),
    authenticate(verifier, "read", ENGINE),
    async (c) => {
      const { tenant, project } = pathParams(c, "tenant", "project");
      const report = await jsonBody(c, EmptyResponseReportSchema);
      return c.json(await diagnosis.diagnose(tenant, project, report));
    },
  );
  return app;
}
