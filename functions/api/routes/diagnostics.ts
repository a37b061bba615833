import { type EmptyResponseDiagnosis, EmptyResponseReportSchema, VanceError } from "@vance/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { type AuthEnv, authenticate, ENGINE, type TokenVerifier } from "../auth";
import { jsonBody } from "../json-body";
import { describe, jsonRequest, jsonResponse, type Operation, PROJECT_PARAMS } from "../openapi";
import { EmptyResponseDiagnosisSchema } from "../responses";

/**
 * A report carries the whole conversation the model saw, tool results included: it may be far
 * larger than a document. The app's general body limit leaves this route to this one.
 */
export const DIAGNOSTICS_MAX_BODY_BYTES = 4 * 1024 * 1024;

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
    bodyLimit({
      maxSize: DIAGNOSTICS_MAX_BODY_BYTES,
      onError: () => {
        throw new VanceError(
          "payload_too_large",
          413,
          `a diagnosis report is limited to ${DIAGNOSTICS_MAX_BODY_BYTES} bytes; send the conversation's text parts only`,
        );
      },
    }),
    async (c) => {
      const { tenant, project } = c.req.param() as { tenant: string; project: string };
      const report = await jsonBody(c, EmptyResponseReportSchema);
      return c.json(await diagnosis.diagnose(tenant, project, report));
    },
  );
  return app;
}
