import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeSecretsKey, SECRETS_KEY_BYTES } from "@vance/adapters";
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

/**
 * The key that seals tenant secrets: `VANCE_SECRETS_KEY` when set (always in Lambda), else one
 * generated on first start and kept in the data dir beside the state it protects.
 */
export function localSecretsKey(config: Config): Uint8Array {
  if (config.VANCE_SECRETS_KEY) return config.VANCE_SECRETS_KEY;
  const file = join(config.VANCE_DATA_DIR, "secrets-key");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
    const key = randomBytes(SECRETS_KEY_BYTES);
    // `wx`: two servers starting on one data dir must not each write a different key.
    try {
      writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
      return new Uint8Array(key);
    } catch (writeError) {
      if ((writeError as NodeJS.ErrnoException).code !== "EEXIST") throw writeError;
      text = readFileSync(file, "utf8");
    }
  }
  const key = decodeSecretsKey(text);
  if (!key)
    throw new Error(`invalid configuration:\n- ${file}: must hold the base64 of 32 bytes (the secrets key)`);
  return key;
}
