import { parseArgs } from "node:util";
import { assertProjectId } from "@vance/core";
import type { Role } from "./auth";
import { mintToken } from "./auth";
import { loadConfig } from "./config";
import { localJwtSecret } from "./local-secret";

/**
 * `npm run token -- --tenant T --roles read,write [--ttl 3600] [--project P] [--processes]`: mints a
 * token for the local secret; `--project` limits it to one project, `--processes` to the routes an
 * engine runs processes with.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tenant: { type: "string" },
      roles: { type: "string", default: "read" },
      ttl: { type: "string", default: "86400" },
      project: { type: "string" },
      processes: { type: "boolean", default: false },
    },
  });
  if (!values.tenant)
    throw new Error(
      "usage: npm run token -- --tenant <tenant|*> --roles read,write,admin [--ttl seconds] [--project <project>] [--processes]",
    );
  const roles = values.roles.split(",").map((role) => role.trim());
  const bad = roles.filter((role) => !["read", "write", "admin"].includes(role));
  if (bad.length > 0) throw new Error(`unknown roles: ${bad.join(", ")} (read, write, admin)`);
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error("--ttl is a positive number of seconds");
  if (values.project !== undefined) assertProjectId(values.project);
  const claims = {
    tenant: values.tenant,
    roles: roles as Role[],
    ...(values.project === undefined ? {} : { project: values.project }),
    ...(values.processes ? { reach: "processes" as const } : {}),
  };
  console.log(await mintToken(localJwtSecret(loadConfig()), claims, ttl));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
