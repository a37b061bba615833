import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSecretStore, SqliteStateStore } from "@vance/adapters/sqlite";
import { Generations, requestMarkers, SecretService, type SecretStore } from "@vance/core";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Issue 24: a tenant secret (an MCP server's header `${secret:NAME}`, resolved on every call) is
 * read from the secret store once per generation of the tenant's secrets, and a write through the
 * service on any instance is seen by the next request that read the generations.
 */

const dirs: string[] = [];
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const KEY = "0123456789abcdef0123456789abcdef";

/** One instance: its own generations and secret service over the shared SQLite file, its store reads counted. */
function instance(file: string) {
  const state = new SqliteStateStore(file);
  const inner = new SqliteSecretStore(file, { key: Buffer.from(KEY) });
  closers.push(() => state.close());
  let gets = 0;
  const store: SecretStore = {
    get: (tenant, name) => {
      gets++;
      return inner.get(tenant, name);
    },
    put: (tenant, name, value) => inner.put(tenant, name, value),
    delete: (tenant, name) => inner.delete(tenant, name),
    list: (tenant) => inner.list(tenant),
  };
  const generations = new Generations({ state });
  const secrets = new SecretService({ store, platform: () => undefined, generations });
  /** A request's start: the generations of acme/shop, as a process record read brings them. */
  const request = () => generations.read(requestMarkers("acme", "shop"));
  return { secrets, request, gets: () => gets };
}

describe("tenant secrets cached per generation", () => {
  it("ten calls read a secret once; a write on another instance is seen by its next request", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-secrets-"));
    dirs.push(dir);
    const file = join(dir, "state.sqlite");
    const a = instance(file);
    const b = instance(file);
    await b.secrets.put("acme", "API_TOKEN", "v1");

    for (let call = 0; call < 10; call++) {
      await a.request();
      expect(await a.secrets.lookupFor("acme", "project")("API_TOKEN")).toBe("v1");
    }
    expect(a.gets()).toBe(1);

    await b.secrets.put("acme", "API_TOKEN", "v2");
    await a.request();
    expect(await a.secrets.lookupFor("acme", "tenant")("API_TOKEN")).toBe("v2");
    expect(a.gets()).toBe(2);

    // An absent secret is remembered as absent too, and its creation seen at once.
    await a.request();
    expect(await a.secrets.lookupFor("acme", "project")("OTHER")).toBeUndefined();
    expect(await a.secrets.lookupFor("acme", "project")("OTHER")).toBeUndefined();
    expect(a.gets()).toBe(3);
    await b.secrets.put("acme", "OTHER", "set");
    await a.request();
    expect(await a.secrets.lookupFor("acme", "project")("OTHER")).toBe("set");

    await b.secrets.delete("acme", "API_TOKEN");
    await a.request();
    expect(await a.secrets.lookupFor("acme", "project")("API_TOKEN")).toBeUndefined();
  });

  it("without generations every lookup reads the store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-secrets-"));
    dirs.push(dir);
    const inner = new SqliteSecretStore(join(dir, "state.sqlite"), { key: Buffer.from(KEY) });
    await inner.put("acme", "API_TOKEN", "v1");
    let gets = 0;
    const secrets = new SecretService({
      store: {
        get: (tenant, name) => {
          gets++;
          return inner.get(tenant, name);
        },
        put: (tenant, name, value) => inner.put(tenant, name, value),
        delete: (tenant, name) => inner.delete(tenant, name),
        list: (tenant) => inner.list(tenant),
      },
      platform: () => undefined,
    });
    await secrets.lookupFor("acme", "project")("API_TOKEN");
    await secrets.lookupFor("acme", "project")("API_TOKEN");
    expect(gets).toBe(2);
  });
});
