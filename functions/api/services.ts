import { join } from "node:path";
import { createS3Client, FsObjectStore, loadBundledDocuments, S3ObjectStore } from "@vance/adapters";
import {
  BUILT_IN_TOOL_TYPES,
  DocumentCascade,
  type Logger,
  type ObjectStore,
  ServerToolService,
  ToolTypeRegistry,
  whoami,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import type { AppServices } from "./app";
import type { Config } from "./config";

/** The service version reported by health and OpenAPI. */
export const VERSION = "0.1.0";

/** One JSON line per event, as CloudWatch and local terminals both read well. */
export const jsonLogger: Logger = {
  info: (event, fields) => console.log(JSON.stringify({ level: "INFO", event, ...fields })),
  warn: (event, fields) => console.warn(JSON.stringify({ level: "WARN", event, ...fields })),
};

/** The document store the configuration selects: a directory on disk, or an S3 bucket. */
export function documentStore(config: Config): ObjectStore {
  if (config.VANCE_STORE === "fs") return new FsObjectStore(join(config.VANCE_DATA_DIR, "documents"));
  const client = createS3Client({
    region: config.AWS_REGION,
    ...(config.VANCE_S3_ENDPOINT ? { endpoint: config.VANCE_S3_ENDPOINT } : {}),
    forcePathStyle: config.VANCE_S3_FORCE_PATH_STYLE,
  });
  return new S3ObjectStore({ client, bucket: config.VANCE_DOCUMENTS_BUCKET! });
}

/** The composition root: builds every service from settings and ports. */
export function buildServices(
  config: Config,
  jwtSecret: string,
  overrides: { documents?: ObjectStore; logger?: Logger } = {},
): AppServices {
  const logger = overrides.logger ?? jsonLogger;
  const types = new ToolTypeRegistry(BUILT_IN_TOOL_TYPES);
  const bundled = loadBundledDocuments(config.VANCE_DEFAULTS_DIR ?? DEFAULTS_DIR);
  const cascade = new DocumentCascade(overrides.documents ?? documentStore(config), bundled);
  const tools = new ServerToolService(cascade, types, [whoami], logger);
  return { version: VERSION, jwtSecret, logger, types, cascade, tools };
}
