import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { LINKED } from "./linked";
import { BUNDLE_FILES, bundledFiles, linkedSettings, loadFunctionConfig, readSettings } from "./settings";

/** `Resource` as a deployed function sees it: the linked resources' properties by name. */
const resource = {
  App: { name: "vance-server-tools", stage: "test" },
  Documents: { name: "docs-bucket", type: "sst.aws.Bucket" },
  Catalog: { name: "catalog-bucket", type: "sst.aws.Bucket" },
  State: { name: "state-table", type: "sst.aws.Dynamo" },
  JwtSecret: { value: "linked-jwt-secret-0123456789", type: "sst.sst.Secret" },
  SecretsKey: { value: Buffer.alloc(32, 7).toString("base64"), type: "sst.sst.Secret" },
};

describe("linkedSettings: what the linked resources supply", () => {
  it("maps each linked resource to the setting it supplies", () => {
    expect(linkedSettings(resource)).toEqual({
      VANCE_DOCUMENTS_BUCKET: "docs-bucket",
      VANCE_CATALOG_BUCKET: "catalog-bucket",
      VANCE_STATE_TABLE: "state-table",
      VANCE_JWT_SECRET: "linked-jwt-secret-0123456789",
      VANCE_SECRETS_KEY: resource.SecretsKey.value,
    });
  });

  it("the webhook secret's empty placeholder leaves the webhook unset; a set one supplies the URL", () => {
    expect(linkedSettings({ DiagnosticWebhook: { value: "" } })).toEqual({});
    expect(linkedSettings({ DiagnosticWebhook: { value: "https://hooks.example.com/x" } })).toEqual({
      VANCE_DIAGNOSTIC_WEBHOOK_URL: "https://hooks.example.com/x",
    });
  });

  it("a resource not linked, or without its property, supplies nothing", () => {
    expect(
      linkedSettings({ Catalog: { name: "catalog-bucket" }, State: { arn: "x" }, JwtSecret: { value: "" } }),
    ).toEqual({ VANCE_CATALOG_BUCKET: "catalog-bucket" });
    expect(linkedSettings({})).toEqual({});
  });

  it("never reads a name that is not linked (SST's Resource throws on those)", () => {
    const strict = new Proxy(
      { Documents: { name: "docs-bucket" } },
      {
        get(target, name) {
          if (!(name in target)) throw new Error(`"${String(name)}" is not linked`);
          return Reflect.get(target, name);
        },
      },
    );
    expect(linkedSettings(strict)).toEqual({ VANCE_DOCUMENTS_BUCKET: "docs-bucket" });
  });

  it("covers every linked name infra may deploy", () => {
    expect(Object.keys(LINKED).sort()).toEqual([
      "Catalog",
      "DiagnosticWebhook",
      "Documents",
      "JwtSecret",
      "SecretsKey",
      "State",
    ]);
  });
});

describe("readSettings: defaults, then links, then environment variables", () => {
  it("a set variable wins over the link, which wins over the entry's default", () => {
    const settings = readSettings({
      defaults: { VANCE_STORE: "s3", VANCE_STATE_TABLE: "default-table" },
      resource,
      env: { VANCE_JWT_SECRET: "from-the-environment-0123", VANCE_STORE: "fs" },
    });
    expect(settings).toMatchObject({
      VANCE_STORE: "fs",
      VANCE_STATE_TABLE: "state-table",
      VANCE_JWT_SECRET: "from-the-environment-0123",
      VANCE_DOCUMENTS_BUCKET: "docs-bucket",
    });
  });

  it("an empty variable is unset and does not hide the link", () => {
    expect(readSettings({ resource, env: { VANCE_STATE_TABLE: "" } }).VANCE_STATE_TABLE).toBe("state-table");
  });

  it("without links the environment is the whole configuration (the local server)", () => {
    expect(readSettings({ resource: {}, env: { PORT: "9000" } })).toEqual({ PORT: "9000" });
  });
});

describe("loadFunctionConfig: settings validated at a function's start", () => {
  it("builds the configuration from the links", () => {
    const config = loadFunctionConfig({
      defaults: { VANCE_STORE: "s3", VANCE_STATE: "dynamodb" },
      resource,
      env: {},
      require: ["VANCE_JWT_SECRET", "VANCE_SECRETS_KEY"],
    });
    expect(config).toMatchObject({
      VANCE_STORE: "s3",
      VANCE_DOCUMENTS_BUCKET: "docs-bucket",
      VANCE_STATE: "dynamodb",
      VANCE_STATE_TABLE: "state-table",
      VANCE_JWT_SECRET: "linked-jwt-secret-0123456789",
    });
    expect(config.VANCE_SECRETS_KEY).toHaveLength(32);
  });

  it("names every missing companion at once, with the resource that would supply it", () => {
    let message = "";
    try {
      loadFunctionConfig({
        defaults: { VANCE_STORE: "s3", VANCE_STATE: "dynamodb" },
        resource: { Documents: resource.Documents },
        env: {},
        require: ["VANCE_JWT_SECRET", "VANCE_SECRETS_KEY"],
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("\n").sort()).toEqual(
      [
        "invalid configuration:",
        "- VANCE_CATALOG_BUCKET (linked resource Catalog): required when VANCE_STORE=s3",
        "- VANCE_STATE_TABLE (linked resource State): required when VANCE_STATE=dynamodb",
        "- VANCE_JWT_SECRET (linked resource JwtSecret): required here",
        "- VANCE_SECRETS_KEY (linked resource SecretsKey): required here",
      ].sort(),
    );
  });

  it("a bad linked value is reported like a bad variable", () => {
    expect(() => loadFunctionConfig({ resource: { SecretsKey: { value: "short" } }, env: {} })).toThrow(
      /VANCE_SECRETS_KEY \(linked resource SecretsKey\): VANCE_SECRETS_KEY must be the base64 of exactly 32 bytes/,
    );
  });
});

describe("bundledFiles: the files beside a bundle's entry", () => {
  it("resolves each against the entry's URL", () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-bundled-"));
    try {
      for (const file of [BUNDLE_FILES.VANCE_SCRIPT_WORKER, BUNDLE_FILES.VANCE_SCRIPT_WASM]) {
        writeFileSync(join(dir, file), "");
      }
      mkdirSync(join(dir, BUNDLE_FILES.VANCE_DEFAULTS_DIR));
      const entry = pathToFileURL(join(dir, "lambda.mjs")).href;
      expect(bundledFiles(entry, ["VANCE_SCRIPT_WORKER", "VANCE_SCRIPT_WASM", "VANCE_DEFAULTS_DIR"])).toEqual(
        {
          VANCE_SCRIPT_WORKER: join(dir, BUNDLE_FILES.VANCE_SCRIPT_WORKER),
          VANCE_SCRIPT_WASM: join(dir, BUNDLE_FILES.VANCE_SCRIPT_WASM),
          VANCE_DEFAULTS_DIR: join(dir, BUNDLE_FILES.VANCE_DEFAULTS_DIR),
        },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails naming the files the bundle lacks", () => {
    expect(() =>
      bundledFiles("file:///nowhere/lambda.mjs", ["VANCE_SCRIPT_WASM", "VANCE_DEFAULTS_DIR"]),
    ).toThrow("the bundle lacks quickjs.wasm, defaults beside its entry (npm run build copies them)");
  });
});
