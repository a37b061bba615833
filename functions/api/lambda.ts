import { handle } from "hono/aws-lambda";
import { createApp } from "./app";
import { loadConfig } from "./config";
import { buildServices } from "./services";

const config = loadConfig({ VANCE_STORE: "s3", ...process.env });
if (!config.VANCE_JWT_SECRET)
  throw new Error("invalid configuration:\n- VANCE_JWT_SECRET: required in Lambda");

/** The Lambda entry: the same Hono app as the local server, over S3. */
export const handler = handle(createApp(await buildServices(config, config.VANCE_JWT_SECRET)));
