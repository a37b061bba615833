import { parseArgs } from "node:util";
import { assertProjectId, TenantIdSchema } from "@vance/core";
import * as v from "valibot";
import { mintToken, type Role } from "./auth";
import { loadConfig } from "./config";
import { existingJwtSecret, jwtSecretFile } from "./local-secret";

const USAGE = `Mints a bearer token for the local server (npm start), signed with its secret.

usage: npm run token -- --tenant <tenant|*> [--roles read,write,admin] [--ttl seconds] [--project id] [--processes] [--data-dir dir]

  --tenant    the tenant the token is for; * for every tenant (a platform token)
  --roles     comma-separated: read, write, admin (default: read)
  --ttl       seconds until it expires (default: 86400)
  --project   limit the token to one project of the tenant
  --processes limit the token to what an engine needs (spawn, manifests, invoke, MCP)
  --data-dir  the server's data dir (default: VANCE_DATA_DIR, else ./.data), where it keeps jwt-secret

The secret is the server's: VANCE_JWT_SECRET when set, else the jwt-secret file the server
wrote into its data dir on first start. Run this with the same settings as npm start.`;

const ROLES: readonly Role[] = ["read", "write", "admin"];

function tenantIdProblem(tenant: string): string | null {
  const result = v.safeParse(TenantIdSchema, tenant);
  return result.success ? null : (result.issues[0]?.message ?? "invalid");
}

/** A mistake of the caller: printed with the usage, exit code 2. */
class UsageError extends Error {}

/** `npm run token -- --tenant T --roles read,write [--ttl 3600] [--project P] [--processes]`: mints a token for the local server's secret. */
const OPTIONS = {
  tenant: { type: "string" },
  roles: { type: "string", default: "read" },
  ttl: { type: "string", default: "86400" },
  project: { type: "string" },
  processes: { type: "boolean", default: false },
  "data-dir": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function options(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const values = options(argv);
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (!values.tenant) throw new UsageError("--tenant is required");
  const tenantProblem = values.tenant === "*" ? null : tenantIdProblem(values.tenant);
  if (tenantProblem) throw new UsageError(`--tenant '${values.tenant}' is no tenant id: ${tenantProblem}`);
  const roles = values.roles.split(",").map((role) => role.trim());
  const bad = roles.filter((role) => !ROLES.includes(role as Role));
  if (bad.length > 0) throw new UsageError(`unknown roles: ${bad.join(", ")} (read, write, admin)`);
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError("--ttl is a positive number of seconds");
  if (values.project !== undefined) {
    try {
      assertProjectId(values.project);
    } catch (error) {
      throw new UsageError(`--project '${values.project}' is no project id: ${(error as Error).message}`);
    }
  }
  const config = loadConfig({
    ...process.env,
    ...(values["data-dir"] ? { VANCE_DATA_DIR: values["data-dir"] } : {}),
  });
  // Never make a secret here: one the server does not know mints tokens it refuses (401).
  const found = existingJwtSecret(config);
  if (!found) {
    throw new Error(
      `no JWT secret at ${jwtSecretFile(config)}: the server writes it there on its first start.\n` +
        "Start the server first (npm start), or give the data dir it runs with " +
        "(VANCE_DATA_DIR=<dir> npm run token -- …, or --data-dir <dir>), or set VANCE_JWT_SECRET to its secret.",
    );
  }
  console.error(
    `signed with ${found.source === "VANCE_JWT_SECRET" ? "VANCE_JWT_SECRET" : `the secret in ${found.source}`}`,
  );
  const claims = {
    tenant: values.tenant,
    roles: roles as Role[],
    ...(values.project === undefined ? {} : { project: values.project }),
    ...(values.processes ? { reach: "processes" as const } : {}),
  };
  console.log(await mintToken(found.secret, claims, ttl));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) {
    console.error(`${message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(message);
  process.exit(1);
});
