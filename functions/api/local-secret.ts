import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { decodeSecretsKey, SECRETS_KEY_BYTES } from "@vance/adapters";
import type { Config } from "./config";

/** The file of the data dir that keeps the generated JWT secret. */
export function jwtSecretFile(config: Config): string {
  return resolve(config.VANCE_DATA_DIR, "jwt-secret");
}

/**
 * The JWT secret the local server signs with, without making one: `VANCE_JWT_SECRET` when set,
 * else the data dir's file; null when the server has not started on this data dir yet.
 */
export function existingJwtSecret(config: Config): { secret: string; source: string } | null {
  if (config.VANCE_JWT_SECRET) return { secret: config.VANCE_JWT_SECRET, source: "VANCE_JWT_SECRET" };
  const file = jwtSecretFile(config);
  try {
    return { secret: readFileSync(file, "utf8").trim(), source: file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * The text of a secret file of the data dir, generating it on first use. `wx`: two servers
 * starting on one data dir must not each write a different secret — the one that loses the race
 * reads the winner's file.
 */
function secretFileOnce(config: Config, file: string, generate: () => string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(config.VANCE_DATA_DIR, { recursive: true });
  const text = `${generate()}\n`;
  try {
    writeFileSync(file, text, { mode: 0o600, flag: "wx" });
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readFileSync(file, "utf8");
  }
}

/** The JWT secret: `VANCE_JWT_SECRET` when set, else one generated on first start and kept in the data dir. */
export function localJwtSecret(config: Config): string {
  if (config.VANCE_JWT_SECRET) return config.VANCE_JWT_SECRET;
  return secretFileOnce(config, jwtSecretFile(config), () => randomBytes(32).toString("base64url")).trim();
}

/**
 * The key that seals tenant secrets: `VANCE_SECRETS_KEY` when set (always in Lambda), else one
 * generated on first start and kept in the data dir beside the state it protects.
 */
export function localSecretsKey(config: Config): Uint8Array {
  if (config.VANCE_SECRETS_KEY) return config.VANCE_SECRETS_KEY;
  const file = join(config.VANCE_DATA_DIR, "secrets-key");
  const key = decodeSecretsKey(
    secretFileOnce(config, file, () => randomBytes(SECRETS_KEY_BYTES).toString("base64")),
  );
  if (!key)
    throw new Error(`invalid configuration:\n- ${file}: must hold the base64 of 32 bytes (the secrets key)`);
  return key;
}
