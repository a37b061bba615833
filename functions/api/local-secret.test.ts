import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";
import { existingJwtSecret, localJwtSecret, localSecretsKey } from "./local-secret";

const fresh = () =>
  loadConfig({ VANCE_DATA_DIR: join(mkdtempSync(join(tmpdir(), "vance-secret-")), "data") });

describe("the data dir's generated secrets", () => {
  it("are made once: a second start on the data dir reads the first one's, owner-only", () => {
    const config = fresh();
    expect(existingJwtSecret(config)).toBeNull();
    const jwt = localJwtSecret(config);
    expect(localJwtSecret(config)).toBe(jwt);
    expect(existingJwtSecret(config)?.secret).toBe(jwt);
    const key = localSecretsKey(config);
    expect(key).toHaveLength(32);
    expect(localSecretsKey(config)).toEqual(key);
    expect(statSync(join(config.VANCE_DATA_DIR, "secrets-key")).mode & 0o777).toBe(0o600);
  });

  it("keep a file another server wrote first, and refuse a secrets key that is not 32 bytes, naming the file", () => {
    const config = fresh();
    localJwtSecret(config);
    writeFileSync(join(config.VANCE_DATA_DIR, "jwt-secret"), "theirs\n");
    expect(localJwtSecret(config)).toBe("theirs");
    writeFileSync(join(config.VANCE_DATA_DIR, "secrets-key"), "c2hvcnQ=\n");
    expect(() => localSecretsKey(config)).toThrow(`${join(config.VANCE_DATA_DIR, "secrets-key")}: must hold`);
    expect(readFileSync(join(config.VANCE_DATA_DIR, "secrets-key"), "utf8")).toBe("c2hvcnQ=\n");
  });
});
