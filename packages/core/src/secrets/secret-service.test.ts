import { describe, expect, it } from "vitest";
import type { SecretEntry, SecretStore } from "../ports/secret-store";
import { SecretService } from "./secret-service";

/** A store in a Map, recording which tenants were asked. */
function memoryStore(): SecretStore & { asked: string[] } {
  const values = new Map<string, string>();
  const asked: string[] = [];
  return {
    asked,
    async put(tenant, name, value) {
      values.set(`${tenant}\0${name}`, value);
    },
    async delete(tenant, name) {
      return values.delete(`${tenant}\0${name}`);
    },
    async list(tenant): Promise<SecretEntry[]> {
      return [...values.keys()]
        .filter((key) => key.startsWith(`${tenant}\0`))
        .map((key) => ({ name: key.split("\0")[1]!, updatedAt: "2025-01-01T00:00:00.000Z" }));
    },
    async get(tenant, name) {
      asked.push(`${tenant}/${name}`);
      return values.get(`${tenant}\0${name}`);
    },
  };
}

function service() {
  const store = memoryStore();
  const platform: Record<string, string> = { PLATFORM_KEY: "platform-value" };
  return { store, secrets: new SecretService({ store, platform: (name) => platform[name] }) };
}

describe("SecretService.lookupFor: which secrets a document may read", () => {
  it("a project or tenant document reads its own tenant's secrets, never the platform's", async () => {
    const { secrets } = service();
    await secrets.put("acme", "API_KEY", "acme-value");
    await secrets.put("globex", "GLOBEX_KEY", "globex-value");
    for (const layer of ["project", "tenant"] as const) {
      const lookup = secrets.lookupFor("acme", layer);
      expect(await lookup("API_KEY")).toBe("acme-value");
      expect(await lookup("GLOBEX_KEY")).toBeUndefined();
      expect(await lookup("PLATFORM_KEY")).toBeUndefined();
    }
  });

  it("a bundled document reads platform secrets only", async () => {
    const { secrets } = service();
    await secrets.put("acme", "API_KEY", "acme-value");
    const lookup = secrets.lookupFor("acme", "bundled");
    expect(await lookup("PLATFORM_KEY")).toBe("platform-value");
    expect(await lookup("API_KEY")).toBeUndefined();
    expect(await secrets.lookupFor("acme", "builtin")("PLATFORM_KEY")).toBeUndefined();
  });

  it("names outside the secret-name rule are never looked up", async () => {
    const { secrets, store } = service();
    const lookup = secrets.lookupFor("acme", "tenant");
    for (const name of ["globex/API_KEY", "lower", "A.B", "A-B", "../globex/X", `A${"B".repeat(64)}`]) {
      expect(await lookup(name)).toBeUndefined();
    }
    expect(store.asked).toEqual([]);
  });
});

describe("SecretService writes", () => {
  it("refuses bad names (invalid_id) and empty or oversized values (validation_failed), naming no value", async () => {
    const { secrets } = service();
    await expect(secrets.put("acme", "lower_case", "v")).rejects.toMatchObject({ code: "invalid_id" });
    await expect(secrets.put("Bad Tenant", "OK", "v")).rejects.toMatchObject({ code: "invalid_id" });
    await expect(secrets.put("acme", "OK", "")).rejects.toMatchObject({ code: "validation_failed" });
    const big = "é".repeat(4097);
    const error = await secrets.put("acme", "OK", big).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_failed", errors: [{ path: "value" }] });
    expect(JSON.stringify(error)).not.toContain("éé");
    await secrets.put("acme", "OK", "é".repeat(4096));
  });

  it("deleting an unknown secret is secret_not_found", async () => {
    const { secrets } = service();
    await expect(secrets.delete("acme", "MISSING")).rejects.toMatchObject({
      code: "secret_not_found",
      status: 404,
    });
  });
});
