import { parseArgs } from "node:util";
import type { Role } from "./auth";
import { mintToken } from "./auth";
import { loadConfig } from "./config";
import { localJwtSecret } from "./local-secret";

/** `npm run token -- --tenant T --roles read,write [--ttl 3600]`: mints a token for the local secret. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tenant: { type: "string" },
      roles: { type: "string", default: "read" },
      ttl: { type: "string", default: "86400" },
    },
  });
  if (!values.tenant)
    throw new Error("usage: npm run token -- --tenant <tenant|*> --roles read,write,admin [--ttl seconds]");
  const roles = values.roles.split(",").map((role) => role.trim());
  const bad = roles.filter((role) => !["read", "write", "admin"].includes(role));
  if (bad.length > 0) throw new Error(`unknown roles: ${bad.join(", ")} (read, write, admin)`);
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error("--ttl is a positive number of seconds");
  console.log(
    await mintToken(localJwtSecret(loadConfig()), { tenant: values.tenant, roles: roles as Role[] }, ttl),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
