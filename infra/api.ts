import { jwtSecret, secretsKey } from "./secrets";
import { catalog, documents, state } from "./storage";

/** The HTTP API: one Hono app behind a function URL. */
export const api = new sst.aws.Function("Api", {
  handler: "functions/api/lambda.handler",
  runtime: "nodejs22.x",
  memory: "1024 MB",
  timeout: "30 seconds",
  url: true,
  link: [documents, catalog, state, jwtSecret, secretsKey],
  copyFiles: [
    { from: "packages/defaults", to: "defaults" },
    // The script sandbox's worker thread runs this file (built by `npm run build:worker`).
    { from: "packages/sandbox/dist/script-worker.mjs", to: "script-worker.mjs" },
  ],
  environment: {
    VANCE_STORE: "s3",
    VANCE_STATE: "dynamodb",
    VANCE_DOCUMENTS_BUCKET: documents.name,
    VANCE_CATALOG_BUCKET: catalog.name,
    VANCE_STATE_TABLE: state.name,
    VANCE_JWT_SECRET: jwtSecret.value,
    VANCE_SECRETS_KEY: secretsKey.value,
    VANCE_DEFAULTS_DIR: "defaults",
    VANCE_SCRIPT_WORKER: "script-worker.mjs",
  },
});
