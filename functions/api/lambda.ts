import { type ToolUsage, VanceError } from "@vance/core";
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { bundledFiles, loadFunctionConfig } from "../settings";
import { startFunction } from "../start";
import { createApp } from "./app";
import { problemResponse } from "./problem";
import { buildServices, lazyScriptPool } from "./services";

/**
 * The Lambda entry (built to dist/functions/api/lambda.mjs, which infra deploys): the same Hono
 * app as the local server, over S3 and DynamoDB, its buckets, table and secrets linked by infra.
 * A function URL is no socket bound to `HOST`, so the MCP endpoints' loopback `Host` check does not apply.
 * This is production: `/v1` takes tokens of the trusted issuers (`VANCE_TOKEN_ISSUERS`), and the
 * service's own HS256 tokens only when `VANCE_LOCAL_TOKENS=true` says so.
 */
export const handler = await startFunction(
  "api",
  async () => {
    const config = loadFunctionConfig({
      defaults: {
        VANCE_STORE: "s3",
        VANCE_STATE: "dynamodb",
        VANCE_LOCAL_TOKENS: "false",
        ...bundledFiles(import.meta.url, [
          "VANCE_SCRIPT_WORKER",
          "VANCE_PARSE_WORKER",
          "VANCE_SCRIPT_WASM",
          "VANCE_DEFAULTS_DIR",
        ]),
      },
      // Never generated here: the next instance could not verify the tokens or read the secrets.
      require: ["VANCE_JWT_SECRET", "VANCE_SECRETS_KEY"],
    });
    const services = await buildServices(config, config.VANCE_JWT_SECRET!, {
      // Most first events run no script: QuickJS and the workers start at the first that does.
      scripts: lazyScriptPool(config),
    });
    return flushingUsage(
      handle(createApp({ ...services, mcp: { ...services.mcp, loopbackOnly: false } })),
      services.usage,
    );
  },
  (_error, log) =>
    handle(
      new Hono().all("*", () => {
        log();
        return problemResponse(
          new VanceError("start_failed", 500, "the service could not start; its log names the cause"),
          () => {},
        );
      }),
    ),
);

/**
 * The handler, with the usage counted during an invocation written before it ends: a frozen
 * instance runs nothing, and a counted use must not wait for the next event (or be lost with the
 * instance). The scheduled flush may have started the write while the answer was being built;
 * this waits for whatever is left.
 */
function flushingUsage<A extends unknown[], R>(
  serve: (...args: A) => Promise<R>,
  usage: Pick<ToolUsage, "flush">,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await serve(...args);
    } finally {
      await usage.flush();
    }
  };
}
