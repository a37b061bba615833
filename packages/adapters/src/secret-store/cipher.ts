/**
 * Encryption of stored secrets: AES-256-GCM under one 32-byte key from the deploy
 * (`VANCE_SECRETS_KEY`, an SST `Secret`; locally a key file in the data dir).
 *
 * Sealed layout: version (1 byte) ‖ IV (12 bytes, random per write) ‖ tag (16 bytes) ‖ ciphertext.
 * The tenant and the name are the additional authenticated data, so a ciphertext copied to
 * another tenant or name fails authentication instead of serving the wrong caller.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** The key length AES-256 needs. */
export const SECRETS_KEY_BYTES = 32;
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

/** A stored secret that does not authenticate under this key, tenant and name. */
export class SecretDecryptionError extends Error {
  constructor(tenant: string, name: string) {
    super(
      `the stored secret '${name}' of tenant '${tenant}' does not decrypt: it was altered, copied from another tenant or name, or written under another key`,
    );
    this.name = "SecretDecryptionError";
  }
}

/** The 32 key bytes from base64 (standard or URL-safe, padding optional); `null` when it is not that. */
export function decodeSecretsKey(text: string): Uint8Array | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed, "base64");
  return bytes.length === SECRETS_KEY_BYTES ? new Uint8Array(bytes) : null;
}

/** Seals and opens secret values under one key. */
export class SecretCipher {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== SECRETS_KEY_BYTES) {
      throw new Error(`the secrets key must be ${SECRETS_KEY_BYTES} bytes, not ${key.length}`);
    }
    this.#key = Buffer.from(key);
  }

  /** Encrypts `value` for exactly this tenant and name. */
  seal(tenant: string, name: string, value: string): Uint8Array {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(associatedData(tenant, name));
    const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return new Uint8Array(Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), ciphertext]));
  }

  /** The plaintext; throws {@link SecretDecryptionError} unless it authenticates for this tenant and name. */
  open(tenant: string, name: string, sealed: Uint8Array): string {
    const bytes = Buffer.from(sealed);
    if (bytes.length < HEADER_BYTES || bytes[0] !== VERSION) throw new SecretDecryptionError(tenant, name);
    const decipher = createDecipheriv("aes-256-gcm", this.#key, bytes.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(associatedData(tenant, name));
    decipher.setAuthTag(bytes.subarray(1 + IV_BYTES, HEADER_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES)), decipher.final()]).toString(
        "utf8",
      );
    } catch {
      throw new SecretDecryptionError(tenant, name);
    }
  }
}

/** JSON keeps the pair unambiguous whatever characters the parts hold. */
function associatedData(tenant: string, name: string): Buffer {
  return Buffer.from(JSON.stringify(["vance-secret", tenant, name]), "utf8");
}
