import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config";

/** The JWT secret: `VANCE_JWT_SECRET` when set, else one generated on first start and kept in the data dir. */
export function localJwtSecret(config: Config): string {
  if (config.VANCE_JWT_SECRET) return config.VANCE_JWT_SECRET;
  const file = join(config.VANCE_DATA_DIR, "jwt-secret");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
    const secret = randomBytes(32).toString("base64url");
    writeFileSync(file, `${secret}\n`, { mode: 0o600 });
    return secret;
  }
}
