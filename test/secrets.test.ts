import { randomBytes, randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createDynamoClient,
  DynamoSecretStore,
  DynamoStateStore,
  ensureStateTable,
} from "@vance/adapters/aws";
import { DEFAULTS_DIR } from "@vance/defaults";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../functions/api/config";
import { localSecretsKey } from "../functions/api/local-secret";
import { bearer, testApp } from "./support/app";

const ACME = "/v1/tenants/acme";
const GLOBEX = "/v1/tenants/globex";
const ACME_VALUE = "acme-sk-live-0f9e8d7c6b5a";
const GLOBEX_VALUE = "globex-sk-live-1a2b3c4d5e6f";
const PLATFORM_VALUE = "platform-sk-live-99887766";
/** Every value a route must never answer and an upstream of the wrong tenant must never see. */
const ALL_VALUES = [ACME_VALUE, GLOBEX_VALUE, PLATFORM_VALUE];

let upstream: Server;
let upstreamUrl: string;
/** What the upstream received: path and query, and the Authorization header. */
const received: { url: string; auth: string | undefined }[] = [];
let defaultsDir: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    received.push({ url: req.url ?? "", auth: req.headers.authorization });
    // A 200 that repeats what it was sent, credentials included, as careless APIs do.
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ url: req.url, authorization: req.headers.authorization }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

  // The bundled layer with one document of the platform's own that uses a platform secret.
  defaultsDir = mkdtempSync(join(tmpdir(), "vance-defaults-"));
  cpSync(DEFAULTS_DIR, defaultsDir, {
    recursive: true,
    filter: (source) => !source.includes("node_modules"),
  });
  writeFileSync(
    join(defaultsDir, "server-tools", "platform_echo.yaml"),
    restTool("/platform", "${secret:PLATFORM_KEY}"),
  );
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  rmSync(defaultsDir, { recursive: true, force: true });
});

beforeEach(() => {
  received.length = 0;
});

function restTool(path: string, authorization: string, query = ""): string {
  return `type: rest
description: Calls the test upstream with a credential.
parameters:
  url: "${upstreamUrl}${path}${query}"
  headers:
    Authorization: "Bearer ${authorization}"
  inputs:
    - { name: path, type: string, required: false }
`;
}

type App = Awaited<ReturnType<typeof testApp>>["app"];

/** The same secret flow on each state backend. */
function secretsOverHttp(backend: string, makeApp: () => Promise<{ app: App; close: () => Promise<void> }>) {
  describe(`secrets over HTTP (${backend})`, () => {
    let app: App;
    let close: () => Promise<void>;
    let acmeAdmin: Record<string, string>;
    let acmeWriter: Record<string, string>;

    async function request(
      path: string,
      init: RequestInit = {},
      headers: Record<string, string> = acmeAdmin,
    ) {
      const res = await app.request(path, { ...init, headers: { ...headers, ...(init.headers as object) } });
      const text = await res.text();
      for (const value of ALL_VALUES) expect(text, `${init.method ?? "GET"} ${path}`).not.toContain(value);
      return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
    }

    function putSecret(tenantPath: string, name: string, body: unknown, headers = acmeAdmin) {
      return request(
        `${tenantPath}/secrets/${name}`,
        { method: "PUT", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
        headers,
      );
    }

    async function putTool(layerPath: string, name: string, yaml: string) {
      const res = await request(
        `${layerPath}/tools/${name}`,
        { method: "PUT", body: yaml, headers: { "content-type": "application/yaml" } },
        acmeWriter,
      );
      expect(res.status, res.text).toBeLessThan(300);
    }

    async function invoke(name: string, params: Record<string, unknown> = {}) {
      const res = await request(
        `${ACME}/projects/shop/tools/${name}/invoke`,
        { method: "POST", body: JSON.stringify({ params }), headers: { "content-type": "application/json" } },
        acmeWriter,
      );
      expect(res.status, res.text).toBe(200);
      return res.json();
    }

    beforeAll(async () => {
      ({ app, close } = await makeApp());
      acmeAdmin = await bearer({ tenant: "acme", roles: ["admin"] });
      acmeWriter = await bearer({ tenant: "acme", roles: ["read", "write"] });
      const globexAdmin = await bearer({ tenant: "globex", roles: ["admin"] });
      expect((await putSecret(ACME, "API_KEY", { value: ACME_VALUE })).status).toBe(204);
      expect((await putSecret(GLOBEX, "GLOBEX_KEY", { value: GLOBEX_VALUE }, globexAdmin)).status).toBe(204);
      await putTool(`${ACME}/projects/shop`, "acme_echo", restTool("/acme", "${secret:API_KEY}"));
      await putTool(`${ACME}/projects/_tenant`, "acme_tenant_echo", restTool("/acme", "${secret:API_KEY}"));
    });
    afterAll(async () => {
      await close();
    });

    it("PUT answers 204 with no body; GET lists names and write times, never values", async () => {
      const put = await putSecret(ACME, "SECOND_KEY", { value: "second-value" });
      expect(put.status).toBe(204);
      expect(put.text).toBe("");
      const list = await request(`${ACME}/secrets`);
      expect(list.status).toBe(200);
      expect(list.text).not.toContain("second-value");
      const { secrets } = list.json() as { secrets: { name: string; updatedAt: string }[] };
      expect(secrets.map((s) => s.name)).toEqual(["API_KEY", "SECOND_KEY"]);
      for (const entry of secrets) expect(Object.keys(entry).sort()).toEqual(["name", "updatedAt"]);
      expect(Number.isNaN(Date.parse(secrets[0]!.updatedAt))).toBe(false);
    });

    it("a project's and the tenant layer's documents send the tenant's value; the echoing 200 arrives scrubbed", async () => {
      for (const tool of ["acme_echo", "acme_tenant_echo"]) {
        received.length = 0;
        const outcome = await invoke(tool);
        expect(received).toEqual([{ url: "/acme", auth: `Bearer ${ACME_VALUE}` }]);
        expect(outcome.value).toEqual({ url: "/acme", authorization: "Bearer ***" });
      }
    });

    it("tenant B's secret is unreachable from tenant A, by any ${secret:…} spelling", async () => {
      const spellings = [
        "${secret:GLOBEX_KEY}",
        "${secret:globex/GLOBEX_KEY}",
        "${secret:globex.GLOBEX_KEY}",
        "${secret:globex#GLOBEX_KEY}",
        "${secret:../globex/GLOBEX_KEY}",
        "${secret:SECRET#globex}",
        "${secret:globex%23GLOBEX_KEY}",
        "${secret:gLOBEX_KEY}",
      ];
      for (const [i, spelling] of spellings.entries()) {
        await putTool(`${ACME}/projects/shop`, `steal_${i}`, restTool("/steal", spelling));
        const outcome = await invoke(`steal_${i}`);
        expect(JSON.stringify(outcome)).not.toContain(GLOBEX_VALUE);
        if (outcome.error !== undefined) expect(outcome.error, spelling).toBe("SecretNotFound");
      }
      expect(received.map((r) => r.auth).join()).not.toContain(GLOBEX_VALUE);
      // The plain spelling is a placeholder: refused before anything is sent.
      expect((await invoke("steal_0")).error).toBe("SecretNotFound");
    });

    it("a platform VANCE_SECRET_* is unreachable from tenant documents", async () => {
      for (const spelling of ["${secret:PLATFORM_KEY}", "${secret:VANCE_SECRET_PLATFORM_KEY}"]) {
        await putTool(`${ACME}/projects/_tenant`, "borrow_platform", restTool("/borrow", spelling));
        expect(await invoke("borrow_platform")).toMatchObject({ error: "SecretNotFound" });
      }
      // Shadowing the bundled tool's name makes it the tenant's document, with the tenant's secrets.
      await putTool(
        `${ACME}/projects/shop`,
        "platform_echo",
        restTool("/platform", "${secret:PLATFORM_KEY}"),
      );
      expect(await invoke("platform_echo")).toMatchObject({ error: "SecretNotFound" });
      expect(received).toEqual([]);
      const deleted = await request(
        `${ACME}/projects/shop/tools/platform_echo`,
        { method: "DELETE" },
        acmeWriter,
      );
      expect(deleted.status).toBe(204);
    });

    it("a bundled document uses the platform secret, and its echo arrives scrubbed", async () => {
      const outcome = await invoke("platform_echo");
      expect(received).toEqual([{ url: "/platform", auth: `Bearer ${PLATFORM_VALUE}` }]);
      expect(outcome.value).toEqual({ url: "/platform", authorization: "Bearer ***" });
    });

    it("only an admin of the tenant (or a platform admin) may list, put or delete secrets", async () => {
      const refused = [
        await bearer({ tenant: "acme", roles: ["read", "write"] }),
        await bearer({ tenant: "globex", roles: ["admin"] }),
      ];
      for (const headers of refused) {
        expect((await request(`${ACME}/secrets`, {}, headers)).status).toBe(403);
        expect((await putSecret(ACME, "API_KEY", { value: "overwritten" }, headers)).status).toBe(403);
        expect((await request(`${ACME}/secrets/API_KEY`, { method: "DELETE" }, headers)).status).toBe(403);
      }
      expect((await request(`${ACME}/secrets`, {}, {})).status).toBe(401);
      const platform = await bearer({ tenant: "*", roles: ["admin"] });
      expect((await request(`${ACME}/secrets`, {}, platform)).status).toBe(200);
      // Nothing was overwritten by the refused calls.
      received.length = 0;
      await invoke("acme_echo");
      expect(received[0]?.auth).toBe(`Bearer ${ACME_VALUE}`);
    });

    it("refuses bad names with 400 and bad values with 422, repeating no value", async () => {
      for (const name of ["lower", "A-B", `A${"B".repeat(64)}`, "_X", "9X"]) {
        const res = await putSecret(ACME, name, { value: ACME_VALUE });
        expect(res.status, name).toBe(400);
        expect(res.json().code).toBe("invalid_id");
      }
      const bodies: unknown[] = [
        { value: "" },
        { value: "x".repeat(8 * 1024 + 1) },
        { value: 12345 },
        { value: ACME_VALUE, extra: ACME_VALUE },
        { secret: ACME_VALUE },
      ];
      for (const body of bodies) {
        const res = await putSecret(ACME, "BAD_VALUE", body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
        expect(res.json().code).toBe("validation_failed");
        expect(res.text).not.toContain("xxxxxxxx");
      }
      expect((await request(`${ACME}/secrets/bad`, { method: "DELETE" })).status).toBe(400);
      const names = (await request(`${ACME}/secrets`)).json().secrets as { name: string }[];
      expect(names.map((s) => s.name)).not.toContain("BAD_VALUE");
    });

    it("DELETE answers 204, then 404 secret_not_found, and the tool then fails with SecretNotFound", async () => {
      expect((await putSecret(ACME, "SHORT_LIVED", { value: "short-lived" })).status).toBe(204);
      await putTool(`${ACME}/projects/shop`, "short_lived", restTool("/short", "${secret:SHORT_LIVED}"));
      expect((await invoke("short_lived")).value).toEqual({ url: "/short", authorization: "Bearer ***" });
      expect((await request(`${ACME}/secrets/SHORT_LIVED`, { method: "DELETE" })).status).toBe(204);
      const again = await request(`${ACME}/secrets/SHORT_LIVED`, { method: "DELETE" });
      expect(again.status).toBe(404);
      expect(again.json().code).toBe("secret_not_found");
      received.length = 0;
      expect(await invoke("short_lived")).toMatchObject({ error: "SecretNotFound" });
      expect(received).toEqual([]);
    });

    it("an {input} of '..' in the URL path is refused and nothing is sent", async () => {
      await putTool(`${ACME}/projects/shop`, "by_path", restTool("/files/{path}/raw", "${secret:API_KEY}"));
      for (const path of ["..", "."]) {
        expect(await invoke("by_path", { path })).toMatchObject({ error: "InvalidRequest" });
      }
      expect(received).toEqual([]);
      expect((await invoke("by_path", { path: "%2e%2e" })).value).toMatchObject({
        url: "/files/%252e%252e/raw",
      });
    });
  });
}

const env = () => ({
  VANCE_NETWORK_ALLOWLIST: "127.0.0.1",
  VANCE_SECRET_PLATFORM_KEY: PLATFORM_VALUE,
  VANCE_DEFAULTS_DIR: defaultsDir,
});

secretsOverHttp("SQLite, key generated into the data dir", async () => {
  const { app, dataDir } = await testApp({ env: env() });
  return { app, close: async () => rmSync(dataDir, { recursive: true, force: true }) };
});

secretsOverHttp("DynamoDB Local", async () => {
  const client = createDynamoClient({ endpoint: inject("dynamoEndpoint") });
  const tableName = `secrets-http-${randomUUID()}`;
  await ensureStateTable(client, tableName);
  const key = new Uint8Array(randomBytes(32));
  const { app } = await testApp({
    env: env(),
    state: new DynamoStateStore({ client, tableName }),
    secrets: new DynamoSecretStore({ client, tableName, key }),
  });
  return { app, close: async () => client.destroy() };
});

describe("the secrets key", () => {
  it("VANCE_SECRETS_KEY must be the base64 of 32 bytes; a wrong one fails at start naming it", () => {
    const key = randomBytes(32);
    expect(loadConfig({ VANCE_SECRETS_KEY: key.toString("base64") }).VANCE_SECRETS_KEY).toEqual(
      new Uint8Array(key),
    );
    expect(loadConfig({ VANCE_SECRETS_KEY: key.toString("base64url") }).VANCE_SECRETS_KEY).toEqual(
      new Uint8Array(key),
    );
    for (const wrong of [
      randomBytes(16).toString("base64"),
      randomBytes(33).toString("base64"),
      "not base64!",
    ]) {
      expect(() => loadConfig({ VANCE_SECRETS_KEY: wrong })).toThrow(/VANCE_SECRETS_KEY: .*32 bytes/);
    }
  });

  it("locally, one key is generated into the data dir on first start and kept: a restart reads the secrets", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-key-"));
    try {
      const first = await testApp({ dataDir });
      const admin = {
        ...(await bearer({ tenant: "acme", roles: ["admin"] })),
        "content-type": "application/json",
      };
      const put = await first.app.request(`${ACME}/secrets/KEPT`, {
        method: "PUT",
        headers: admin,
        body: JSON.stringify({ value: "kept-value" }),
      });
      expect(put.status).toBe(204);
      const file = join(dataDir, "secrets-key");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const written = readFileSync(file, "utf8");

      const second = await testApp({ dataDir });
      expect(readFileSync(file, "utf8")).toBe(written);
      expect(await second.services.secrets.lookupFor("acme", "tenant")("KEPT")).toBe("kept-value");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("VANCE_SECRETS_KEY wins over the data dir, and a damaged key file fails naming the file", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vance-key-"));
    try {
      const key = randomBytes(32).toString("base64");
      expect(localSecretsKey(loadConfig({ VANCE_DATA_DIR: dataDir, VANCE_SECRETS_KEY: key }))).toEqual(
        new Uint8Array(Buffer.from(key, "base64")),
      );
      expect(() => statSync(join(dataDir, "secrets-key"))).toThrow();
      writeFileSync(join(dataDir, "secrets-key"), "too-short\n");
      expect(() => localSecretsKey(loadConfig({ VANCE_DATA_DIR: dataDir }))).toThrow(
        /secrets-key: .*32 bytes/,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
