import { handle } from "hono/aws-lambda";
import { createApp } from "./app";
import { loadConfig } from "./config";
import { buildServices } from "./services";

// Both are never generated here: the next instance could not verify tokens or read tenant
// secrets. Missing ones are reported in the same error as every other bad setting.
const config = loadConfig(
  { VANCE_STORE: "s3", ...process.env },
  { require: ["VANCE_JWT_SECRET", "VANCE_SECRETS_KEY"] },
);

const services = await buildServices(config, config.VANCE_JWT_SECRET!);

/**
 * The Lambda entry: the same Hono app as the local server, over S3. A function URL is no socket
 * bound to `HOST`, so the MCP endpoints' loopback `Host` check does not apply.
 */
export const handler = handle(createApp({ ...services, mcp: { ...services.mcp, loopbackOnly: false } }));
