import { describe, expect, it } from "vitest";
import { loadConfig } from "./config";

/** The error loadConfig throws for `env`, as its lines. */
function problems(env: Record<string, string>, options?: Parameters<typeof loadConfig>[1]): string[] {
  try {
    loadConfig(env, options);
  } catch (error) {
    return (error as Error).message.split("\n").slice(1);
  }
  throw new Error("expected the configuration to be refused");
}

describe("loadConfig: companion settings are required at start", () => {
  it("refuses VANCE_STATE=dynamodb without VANCE_STATE_TABLE, naming the variable", () => {
    expect(problems({ VANCE_STATE: "dynamodb" })).toEqual([
      "- VANCE_STATE_TABLE: required when VANCE_STATE=dynamodb",
    ]);
  });

  it("refuses a tenant's share of every script thread at start, not at the first script", () => {
    expect(problems({ VANCE_SCRIPT_MAX_THREADS_PER_TENANT: "32" })).toEqual([
      "- VANCE_SCRIPT_MAX_THREADS_PER_TENANT: must be less than VANCE_SCRIPT_MAX_WORKERS (default 32): no tenant may hold every script thread",
    ]);
    expect(
      problems({ VANCE_SCRIPT_MAX_THREADS_PER_TENANT: "4", VANCE_SCRIPT_MAX_WORKERS: "4" }),
    ).toHaveLength(1);
    expect(
      loadConfig({ VANCE_SCRIPT_MAX_THREADS_PER_TENANT: "3", VANCE_SCRIPT_MAX_WORKERS: "4" }),
    ).toMatchObject({
      VANCE_SCRIPT_MAX_THREADS_PER_TENANT: 3,
    });
  });

  it("VANCE_WORKER_NICE: script and parse threads 10 nice levels below the serving thread unless set, 0..19", () => {
    expect(loadConfig({})).toMatchObject({ VANCE_WORKER_NICE: 10 });
    expect(loadConfig({ VANCE_WORKER_NICE: "0" })).toMatchObject({ VANCE_WORKER_NICE: 0 });
    expect(problems({ VANCE_WORKER_NICE: "20" })).toEqual([
      "- VANCE_WORKER_NICE: VANCE_WORKER_NICE must be at most 19",
    ]);
  });

  it("names each missing bucket of VANCE_STORE=s3 on its own line", () => {
    expect(problems({ VANCE_STORE: "s3" })).toEqual([
      "- VANCE_DOCUMENTS_BUCKET: required when VANCE_STORE=s3",
      "- VANCE_CATALOG_BUCKET: required when VANCE_STORE=s3",
    ]);
    expect(problems({ VANCE_STORE: "s3", VANCE_CATALOG_BUCKET: "c" })).toEqual([
      "- VANCE_DOCUMENTS_BUCKET: required when VANCE_STORE=s3",
    ]);
  });

  it("reports missing companions together with every other bad setting in one error", () => {
    expect(
      problems(
        {
          VANCE_STATE: "dynamodb",
          VANCE_STORE: "s3",
          VANCE_DOCUMENTS_BUCKET: "d",
          VANCE_S3_ENDPOINT: "nope",
        },
        { require: ["VANCE_JWT_SECRET"] },
      ),
    ).toEqual([
      "- VANCE_S3_ENDPOINT: VANCE_S3_ENDPOINT must be a URL",
      "- VANCE_CATALOG_BUCKET: required when VANCE_STORE=s3",
      "- VANCE_STATE_TABLE: required when VANCE_STATE=dynamodb",
      "- VANCE_JWT_SECRET: required here",
    ]);
  });

  it("treats an empty variable as unset", () => {
    expect(problems({ VANCE_STATE: "dynamodb", VANCE_STATE_TABLE: "" })).toEqual([
      "- VANCE_STATE_TABLE: required when VANCE_STATE=dynamodb",
    ]);
  });

  it("accepts complete settings and the embedded defaults", () => {
    const config = loadConfig({
      VANCE_STATE: "dynamodb",
      VANCE_STATE_TABLE: "state",
      VANCE_STORE: "s3",
      VANCE_DOCUMENTS_BUCKET: "docs",
      VANCE_CATALOG_BUCKET: "catalog",
    });
    expect(config.VANCE_STATE_TABLE).toBe("state");
    expect(loadConfig({}).VANCE_STORE).toBe("fs");
  });
});

describe("loadConfig: VANCE_STORE_TIMEOUT_MS", () => {
  it("defaults to 3000 ms and refuses values below 100", () => {
    expect(loadConfig({}).VANCE_STORE_TIMEOUT_MS).toBe(3000);
    expect(loadConfig({ VANCE_STORE_TIMEOUT_MS: "1500" }).VANCE_STORE_TIMEOUT_MS).toBe(1500);
    expect(problems({ VANCE_STORE_TIMEOUT_MS: "50" })).toEqual([
      "- VANCE_STORE_TIMEOUT_MS: VANCE_STORE_TIMEOUT_MS must be at least 100",
    ]);
  });
});

describe("loadConfig: prompt_template and diagnostics settings", () => {
  it("VANCE_DEFAULT_MODEL_INSTANCE: openai unless set; tenant=instance entries beside a bare default", () => {
    expect(loadConfig({}).VANCE_DEFAULT_MODEL_INSTANCE("acme")).toBe("openai");
    const pick = loadConfig({
      VANCE_DEFAULT_MODEL_INSTANCE: "cortecs, acme=anthropic",
    }).VANCE_DEFAULT_MODEL_INSTANCE;
    expect([pick("acme"), pick("globex")]).toEqual(["anthropic", "cortecs"]);
    const onlyTenants = loadConfig({
      VANCE_DEFAULT_MODEL_INSTANCE: "acme=cortecs",
    }).VANCE_DEFAULT_MODEL_INSTANCE;
    expect([onlyTenants("acme"), onlyTenants("globex")]).toEqual(["cortecs", undefined]);
    expect(problems({ VANCE_DEFAULT_MODEL_INSTANCE: "Open AI" })).toEqual([
      "- VANCE_DEFAULT_MODEL_INSTANCE: VANCE_DEFAULT_MODEL_INSTANCE must be an instance (openai) and/or tenant=instance entries, comma-separated",
    ]);
  });

  it("the webhook URL must be a URL; the dedup window is at least a second; the log level info or trace", () => {
    expect(loadConfig({}).VANCE_DIAGNOSTIC_DEDUP_SECONDS).toBe(3600);
    expect(loadConfig({}).VANCE_LOG_LEVEL).toBe("info");
    expect(
      problems({
        VANCE_DIAGNOSTIC_WEBHOOK_URL: "hooks",
        VANCE_DIAGNOSTIC_DEDUP_SECONDS: "0",
        VANCE_LOG_LEVEL: "debug",
      }),
    ).toEqual([
      "- VANCE_LOG_LEVEL: VANCE_LOG_LEVEL must be 'info' or 'trace'",
      "- VANCE_DIAGNOSTIC_WEBHOOK_URL: VANCE_DIAGNOSTIC_WEBHOOK_URL must be a URL",
      "- VANCE_DIAGNOSTIC_DEDUP_SECONDS: VANCE_DIAGNOSTIC_DEDUP_SECONDS must be at least 1",
    ]);
  });
});

describe("loadConfig: one message per mistake", () => {
  it.each([["abc"], ["0"], ["70000"]])("PORT=%s is one line naming the rule", (port) => {
    expect(problems({ PORT: port })).toEqual(["- PORT: PORT must be a port number (1 to 65535)"]);
  });

  it("says in words what a setting without its own message expects", () => {
    expect(problems({ VANCE_LOG_LEVEL: "debug", VANCE_S3_FORCE_PATH_STYLE: "yes" })).toEqual([
      "- VANCE_S3_FORCE_PATH_STYLE: expected one of 'true', 'false', '1', '0', got the text \"yes\"",
      "- VANCE_LOG_LEVEL: VANCE_LOG_LEVEL must be 'info' or 'trace'",
    ]);
  });
});
