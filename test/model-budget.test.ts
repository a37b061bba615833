import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore, loadBundledCatalog, syncCatalog } from "@vance/adapters";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { CountingObjectStore, MemoryObjectStore } from "@vance/adapters/testing";
import {
  CATALOG_KEY,
  CatalogEditor,
  compileCatalog,
  Generations,
  type GetResult,
  type Logger,
  ModelCatalogService,
  ObservedToolLimits,
  silentLogger,
  ToolBudgetService,
  VanceError,
} from "@vance/core";
import { DEFAULTS_DIR } from "@vance/defaults";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authentication, type Claims, mintToken } from "../functions/api/auth";
import { TokenVerifier } from "../functions/api/identity/verifier";
import { problemResponse } from "../functions/api/problem";
import { modelRoutes } from "../functions/api/routes/models";
import { testApp } from "./support/app";

const OPENAI_128 =
  "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead.";
const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);
const SECRET = "model-budget-secret-0123456789";

/** The real bundled catalog from packages/defaults, as the services load it. */
const BUNDLED = loadBundledCatalog(DEFAULTS_DIR);

function recordingLogger() {
  const lines: { level: "info" | "warn"; event: string; fields: Record<string, unknown> }[] = [];
  const logger: Logger = {
    info: (event, fields = {}) => lines.push({ level: "info", event, fields: { ...fields } }),
    warn: (event, fields = {}) => lines.push({ level: "warn", event, fields: { ...fields } }),
  };
  return { logger, lines };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function sqlite(file = ":memory:"): SqliteStateStore {
  const state = new SqliteStateStore(file);
  cleanups.push(() => state.close());
  return state;
}

/** A budget service over a catalog bucket holding `objects`, the bundled catalog and a state store. */
function setup(objects: Record<string, string> = {}, state: SqliteStateStore = sqlite()) {
  const bucket = new MemoryObjectStore({ objects });
  const store = new CountingObjectStore(bucket);
  const { logger, lines } = recordingLogger();
  const catalog = new ModelCatalogService({ store, bundled: BUNDLED, logger });
  const observed = new ObservedToolLimits({ state, catalog, logger, now: () => NOW });
  const budget = new ToolBudgetService({ observed });
  return { bucket, store, catalog, observed, budget, state, lines, logger };
}

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("tool budget: the spec's numbers", () => {
  it("openai/gpt-4.1 gets the bundled openai default of 128", async () => {
    const { catalog, budget } = setup();
    expect(await budget.budgetForChain(["openai/gpt-4.1"], { catalog: catalog.begin() })).toEqual({
      maxTools: 128,
      models: [{ model: "openai/gpt-4.1", maxTools: 128, source: "provider" }],
    });
  });

  it("a cortecs model has no limit: the gateway speaks openai but does not inherit its 128", async () => {
    const { catalog, budget } = setup();
    expect(await budget.budgetForChain(["cortecs/some-model"], { catalog: catalog.begin() })).toEqual({
      maxTools: null,
      models: [{ model: "cortecs/some-model", maxTools: null, source: "none" }],
    });
  });

  it("maxTools: 0 on a model under openai means no limit and suppresses the provider default", async () => {
    const { catalog, budget } = setup({ "model/openai/gpt-unbounded.yaml": "maxTools: 0\n" });
    expect(await budget.budgetForChain(["openai/gpt-unbounded"], { catalog: catalog.begin() })).toEqual({
      maxTools: null,
      models: [{ model: "openai/gpt-unbounded", maxTools: null, source: "model" }],
    });
  });

  it("the chain takes the minimum over every model that has a limit", async () => {
    const { catalog, budget } = setup({ "model/cortecs/small.yaml": "maxTools: 64\n" });
    expect(
      await budget.budgetForChain(["openai/x", "cortecs/small", "anthropic/claude-sonnet-4"], {
        catalog: catalog.begin(),
      }),
    ).toEqual({
      maxTools: 64,
      models: [
        { model: "openai/x", maxTools: 128, source: "provider" },
        { model: "cortecs/small", maxTools: 64, source: "model" },
        { model: "anthropic/claude-sonnet-4", maxTools: null, source: "none" },
      ],
    });
  });

  it("maxToolTokens: a model's wins over its provider's (0: no limit), the chain takes the minimum", async () => {
    const { catalog, budget } = setup({
      "model/cortecs/_provider.yaml": "maxToolTokens: 8000\n",
      "model/cortecs/lean.yaml": "maxToolTokens: 3000\n",
      "model/cortecs/roomy.yaml": "maxToolTokens: 0\n",
    });
    expect(
      await budget.budgetForChain(["cortecs/lean", "cortecs/other", "cortecs/roomy"], {
        catalog: catalog.begin(),
      }),
    ).toEqual({
      maxTools: null,
      maxToolTokens: 3000,
      models: [
        { model: "cortecs/lean", maxTools: null, source: "none", maxToolTokens: 3000 },
        { model: "cortecs/other", maxTools: null, source: "none", maxToolTokens: 8000 },
        { model: "cortecs/roomy", maxTools: null, source: "none" },
      ],
    });
    expect(
      compileCatalog([{ path: "model/cortecs/bad.yaml", body: "maxToolTokens: -1\n" }]).errors[0]?.message,
    ).toContain("maxToolTokens must be 0 (no limit) or more");
  });

  it("a bad model id in the chain answers invalid_model and reads nothing", async () => {
    const { catalog, budget, store } = setup();
    const error = await thrown(
      budget.budgetForChain(["openai/gpt-4.1", "gpt-4.1"], { catalog: catalog.begin() }),
    );
    expect(error).toBeInstanceOf(VanceError);
    expect(error).toMatchObject({ code: "invalid_model", status: 400 });
    expect(store.total).toBe(0);
  });
});

describe("catalog reads", () => {
  it("reads catalog.json with one GET cold, one conditional GET answered notModified warm, no LIST", async () => {
    const { bucket, store, catalog, budget } = setup({ "model/cortecs/small.yaml": "maxTools: 64\n" });
    await syncCatalog({ store: bucket, bundled: BUNDLED, logger: recordingLogger().logger });
    const get = vi.spyOn(store, "get");

    expect((await budget.budgetForChain(["cortecs/small"], { catalog: catalog.begin() })).maxTools).toBe(64);
    expect(store.counts).toEqual({ get: 1, put: 0, delete: 0, list: 0 });
    expect(get.mock.calls[0]).toEqual([CATALOG_KEY, undefined]);

    expect((await budget.budgetForChain(["cortecs/small"], { catalog: catalog.begin() })).maxTools).toBe(64);
    expect(store.counts).toEqual({ get: 2, put: 0, delete: 0, list: 0 });
    expect(get.mock.calls[1]?.[1]).toEqual({ ifNoneMatch: expect.any(String) });
    expect(await get.mock.results[1]?.value).toEqual({ notModified: true });

    // A new sync changes the ETag: the warm instance sees the new number on its next call.
    await bucket.put("model/cortecs/small.yaml", "maxTools: 32\n");
    await syncCatalog({ store: bucket, bundled: BUNDLED, logger: recordingLogger().logger });
    expect((await catalog.begin().catalog()).providers.cortecs?.models.small).toEqual({
      maxTools: 32,
    });
    expect(store.counts).toEqual({ get: 3, put: 0, delete: 0, list: 0 });
  });

  it("falls back to the YAML sources while catalog.json is absent; a bucket document replaces the bundled one", async () => {
    const { catalog, store, budget } = setup({
      "model/openai/_provider.yaml": "wireType: openai\nmaxTools: 100\n",
      "model/cortecs/small.yaml": "maxTools: 64\n",
    });
    const result = await budget.budgetForChain(["openai/gpt-4.1", "cortecs/small", "cortecs/other"], {
      catalog: catalog.begin(),
    });
    expect(result.models).toEqual([
      { model: "openai/gpt-4.1", maxTools: 100, source: "provider" },
      { model: "cortecs/small", maxTools: 64, source: "model" },
      { model: "cortecs/other", maxTools: null, source: "none" },
    ]);
    // catalog.json (absent) + one GET per bucket document, after one LIST.
    expect(store.counts).toEqual({ get: 3, put: 0, delete: 0, list: 1 });

    // Warm: unchanged sources are not read again; the listing's ETags say so.
    await budget.budgetForChain(["openai/gpt-4.1"], { catalog: catalog.begin() });
    expect(store.counts).toEqual({ get: 4, put: 0, delete: 0, list: 2 });
  });

  it("the fallback sees a deleted bucket document and lets the bundled one through again", async () => {
    const { catalog, bucket, budget } = setup({ "model/openai/_provider.yaml": "maxTools: 100\n" });
    expect((await budget.budgetForChain(["openai/gpt-4.1"], { catalog: catalog.begin() })).maxTools).toBe(
      100,
    );
    await bucket.delete("model/openai/_provider.yaml");
    expect((await budget.budgetForChain(["openai/gpt-4.1"], { catalog: catalog.begin() })).maxTools).toBe(
      128,
    );
  });

  it("a catalog.json that is not a compiled catalog is reported and the sources are used", async () => {
    const { catalog, budget, lines } = setup({
      [CATALOG_KEY]: '{"version": 2}',
      "model/cortecs/small.yaml": "maxTools: 64\n",
    });
    expect((await budget.budgetForChain(["cortecs/small"], { catalog: catalog.begin() })).maxTools).toBe(64);
    expect(lines.filter((line) => line.event === "catalog.invalid_compiled")).toHaveLength(1);
  });
});

describe("catalog sync", () => {
  it("writes catalog.json, and a second sync with nothing changed writes nothing", async () => {
    const bucket = new CountingObjectStore(
      new MemoryObjectStore({ objects: { "model/cortecs/small.yaml": "maxTools: 64\n" } }),
    );
    const { logger } = recordingLogger();

    const first = await syncCatalog({ store: bucket, bundled: BUNDLED, logger });
    expect(first).toEqual({ changed: true, providers: 3, models: 1, errors: [] });
    expect(bucket.counts.put).toBe(1);
    const written = (await bucket.get(CATALOG_KEY)) as Exclude<GetResult, null | { notModified: true }>;
    expect(JSON.parse(written.body)).toMatchObject({
      version: 1,
      providers: {
        openai: { wireType: "openai", maxTools: 128, models: {} },
        cortecs: { wireType: "openai", models: { small: { maxTools: 64 } } },
        anthropic: { wireType: "anthropic", models: {} },
      },
    });
    expect(JSON.parse(written.body).providers.cortecs).not.toHaveProperty("maxTools");

    bucket.reset();
    expect(await syncCatalog({ store: bucket, bundled: BUNDLED, logger })).toMatchObject({ changed: false });
    expect(bucket.counts.put).toBe(0);

    await bucket.put("model/cortecs/small.yaml", "maxTools: 48\n");
    bucket.reset();
    expect(await syncCatalog({ store: bucket, bundled: BUNDLED, logger })).toMatchObject({ changed: true });
    expect(bucket.counts.put).toBe(1);
  });

  it("reports a broken source document, logs it, and compiles the rest", async () => {
    const bucket = new MemoryObjectStore({
      objects: {
        "model/cortecs/small.yaml": "maxTools: lots\n",
        "model/cortecs/big.yaml": "maxTools: 256\n",
      },
    });
    const { logger, lines } = recordingLogger();
    const result = await syncCatalog({ store: bucket, bundled: BUNDLED, logger });
    expect(result.errors).toEqual([
      { path: "model/cortecs/small.yaml", message: expect.stringMatching(/maxTools/) },
    ]);
    expect(result.models).toBe(1);
    expect(lines.filter((line) => line.event === "catalog.invalid_document")).toHaveLength(1);
  });

  it("the composition root's sync writes the catalog store its budget reads (the local server's start)", async () => {
    const { services, dataDir } = await testApp();
    const catalogDir = new FsObjectStore(join(dataDir, "catalog"));
    await catalogDir.put("model/cortecs/small.yaml", "maxTools: 64\n");

    expect(await services.syncCatalog()).toMatchObject({ changed: true, models: 1 });
    expect(await catalogDir.get(CATALOG_KEY)).not.toBeNull();
    expect(
      (await services.budget.budgetForChain(["cortecs/small"], { catalog: services.catalog.begin() }))
        .maxTools,
    ).toBe(64);
    expect(await services.syncCatalog()).toMatchObject({ changed: false });
  });
});

describe("observed tool limits", () => {
  it("every function instance learns at once: a second instance on the same state store sees the limit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-observed-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "state.sqlite");
    const first = setup({}, sqlite(file));
    const second = setup({}, sqlite(file));
    expect(
      (await second.budget.budgetForChain(["cortecs/some-model"], { catalog: second.catalog.begin() }))
        .maxTools,
    ).toBeNull();

    expect(await first.observed.learn("cortecs/some-model", OPENAI_128)).toBe(128);

    const expected = {
      maxTools: 128,
      models: [{ model: "cortecs/some-model", maxTools: 128, source: "observed" }],
    };
    expect(
      await first.budget.budgetForChain(["cortecs/some-model"], { catalog: first.catalog.begin() }),
    ).toEqual(expected);
    expect(
      await second.budget.budgetForChain(["cortecs/some-model"], { catalog: second.catalog.begin() }),
    ).toEqual(expected);
  });

  it("with generation markers a warm chain's budget is the same, and a limit learned or withdrawn elsewhere moves it at the next read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vance-observed-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "state.sqlite");
    /** An instance whose catalog and learned limits are kept by generation, as the composition root builds them. */
    const instance = () => {
      const state = sqlite(file);
      const generations = new Generations({ state });
      const { logger } = recordingLogger();
      const catalog = new ModelCatalogService({
        store: new MemoryObjectStore({ objects: {} }),
        bundled: BUNDLED,
        logger,
        generations,
      });
      const observed = new ObservedToolLimits({ state, catalog, logger, now: () => NOW, generations });
      return { catalog, observed, budget: new ToolBudgetService({ observed, generations }) };
    };
    const learner = instance();
    const engine = instance();
    const chain = ["openai/gpt-4.1", "cortecs/some-model"];
    const maxTools = async () =>
      (await engine.budget.budgetForChain(chain, { tenant: "acme", catalog: engine.catalog.begin() }))
        .maxTools;
    expect(await maxTools()).toBe(128);
    const warm = await engine.budget.budgetForChain(chain, {
      tenant: "acme",
      catalog: engine.catalog.begin(),
    });
    expect(
      await engine.budget.budgetForChain(chain, { tenant: "acme", catalog: engine.catalog.begin() }),
    ).toEqual(warm);

    await learner.observed.learn("cortecs/some-model", "Too many tools provided: 163 > 64");
    expect(await maxTools()).toBe(64);
    await learner.observed.learn("openai/gpt-4.1", "Too many tools provided: 163 > 40", "acme");
    expect(await maxTools()).toBe(40);
    // Another tenant's chain of the same models is its own: acme's limit does not bind it.
    expect(
      (await engine.budget.budgetForChain(chain, { tenant: "other", catalog: engine.catalog.begin() }))
        .maxTools,
    ).toBe(64);
    expect(await learner.observed.withdraw("acme", "openai")).toBe(true);
    expect(await maxTools()).toBe(64);
    expect(await learner.observed.withdraw("*", "cortecs")).toBe(true);
    expect(await maxTools()).toBe(128);
  });

  it("learning logs exactly one WARN, naming the endpoint, the scope and the catalog fix", async () => {
    const { observed, lines } = setup();
    await observed.learn("cortecs/some-model", OPENAI_128);
    expect(lines).toEqual([
      {
        level: "warn",
        event: "budget.observed_tool_limit",
        fields: {
          model: "cortecs/some-model",
          instance: "cortecs",
          scope: "*",
          maxTools: 128,
          fix: "add maxTools: 128 to model/cortecs/_provider.yaml in the catalog (the endpoint's limit; model/cortecs/some-model.yaml for this model alone)",
        },
      },
    ]);
  });

  it("the limit belongs to the endpoint: a rejection seen with cortecs/model-a cuts cortecs/model-b, not another instance", async () => {
    const { catalog, observed, budget } = setup();
    await observed.learn("cortecs/model-a", "Too many tools provided: 163 > 64");
    expect(
      await budget.budgetForChain(["cortecs/model-b", "gateway/model-a"], { catalog: catalog.begin() }),
    ).toEqual({
      maxTools: 64,
      models: [
        { model: "cortecs/model-b", maxTools: 64, source: "observed" },
        { model: "gateway/model-a", maxTools: null, source: "none" },
      ],
    });
  });

  it("a per-model catalog limit still wins when it is lower than the endpoint's observed one", async () => {
    const { catalog, observed, budget } = setup({ "model/cortecs/small.yaml": "maxTools: 32\n" });
    await observed.learn("cortecs/model-a", "Too many tools provided: 163 > 64");
    expect(
      (await budget.budgetForChain(["cortecs/small", "cortecs/other"], { catalog: catalog.begin() })).models,
    ).toEqual([
      { model: "cortecs/small", maxTools: 32, source: "model" },
      { model: "cortecs/other", maxTools: 64, source: "observed" },
    ]);
  });

  it("a tenant's report binds that tenant's budgets only; a platform report binds every tenant", async () => {
    const { catalog, observed, budget } = setup();
    await observed.learn("cortecs/model-a", "Too many tools provided: 163 > 40", "acme");
    const forTenant = async (tenant?: string) =>
      (
        await budget.budgetForChain(["cortecs/model-b"], {
          ...(tenant === undefined ? {} : { tenant }),
          catalog: catalog.begin(),
        })
      ).maxTools;
    expect(await forTenant("acme")).toBe(40);
    expect(await forTenant("other")).toBeNull();
    expect(await forTenant()).toBeNull();
    await observed.learn("cortecs/model-a", "Too many tools provided: 163 > 90");
    expect(await forTenant("other")).toBe(90);
    // The smaller of the platform's and the tenant's own.
    expect(await forTenant("acme")).toBe(40);
  });

  it("an observation binds only when it is below the catalog's limit", async () => {
    const { catalog, observed, budget } = setup({
      "model/gw/gpt-unbounded.yaml": "maxTools: 0\n",
      "model/gw/capped.yaml": "maxTools: 200\n",
      "model/gw/tight.yaml": "maxTools: 50\n",
    });
    await observed.learn("gw/gpt-4.1", "'tools' must contain at most 96 items");
    expect(
      (
        await budget.budgetForChain(["gw/gpt-unbounded", "gw/capped", "gw/tight"], {
          catalog: catalog.begin(),
        })
      ).models,
    ).toEqual([
      { model: "gw/gpt-unbounded", maxTools: 96, source: "observed" },
      { model: "gw/capped", maxTools: 96, source: "observed" },
      { model: "gw/tight", maxTools: 50, source: "model" },
    ]);
  });

  it("a text that names no limit teaches nothing: 422 no_limit_in_error, no WARN, budget unchanged", async () => {
    const { catalog, observed, budget, lines } = setup();
    const error = await thrown(observed.learn("cortecs/some-model", "502 Bad Gateway"));
    expect(error).toMatchObject({ code: "no_limit_in_error", status: 422 });
    expect(lines).toEqual([]);
    expect(
      (await budget.budgetForChain(["cortecs/some-model"], { catalog: catalog.begin() })).maxTools,
    ).toBeNull();
  });
});

describe("/v1/models routes", () => {
  function app(objects: Record<string, string> = {}) {
    const services = setup(objects);
    const hono = new Hono();
    hono.onError((error) => problemResponse(error, () => {}));
    hono.use(
      "/v1/*",
      authentication(
        new TokenVerifier(
          { secret: SECRET, localTokens: true, issuers: [], publicUrl: "http://localhost" },
          { logger: silentLogger },
        ),
      ),
    );
    const editor = new CatalogEditor({
      store: services.bucket,
      rebuild: () => syncCatalog({ store: services.bucket, bundled: BUNDLED, logger: services.logger }),
      catalog: services.catalog,
    });
    hono.route(
      "/v1/models",
      modelRoutes({
        budget: services.budget,
        observed: services.observed,
        catalog: services.catalog,
        editor,
      }),
    );
    return { app: hono, ...services };
  }

  async function auth(claims: Claims): Promise<Record<string, string>> {
    return { authorization: `Bearer ${await mintToken(SECRET, claims, 3600)}` };
  }

  function postLimit(hono: Hono, headers: Record<string, string>, body: unknown) {
    return hono.request("/v1/models/observed-limits", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  describe("happy", () => {
    it("GET /budget answers the chain's minimum for any valid token", async () => {
      const { app: hono } = app({ "model/cortecs/small.yaml": "maxTools: 64\n" });
      const res = await hono.request("/v1/models/budget?chain=openai/gpt-4.1,%20cortecs/small", {
        headers: await auth({ tenant: "acme", roles: [] }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        maxTools: 64,
        models: [
          { model: "openai/gpt-4.1", maxTools: 128, source: "provider" },
          { model: "cortecs/small", maxTools: 64, source: "model" },
        ],
      });
    });

    it("POST /observed-limits learns the limit and the next budget uses it", async () => {
      const { app: hono, lines } = app();
      const admin = await auth({ tenant: "*", roles: ["admin"] });
      const res = await postLimit(hono, admin, { model: "cortecs/some-model", error: OPENAI_128 });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ model: "cortecs/some-model", maxTools: 128 });
      expect(lines.filter((line) => line.event === "budget.observed_tool_limit")).toHaveLength(1);

      const budget = await hono.request("/v1/models/budget?chain=cortecs/some-model", { headers: admin });
      expect(await budget.json()).toEqual({
        maxTools: 128,
        models: [{ model: "cortecs/some-model", maxTools: 128, source: "observed" }],
      });
    });
  });

  describe("learned limits are bounded (issue 37 item 4, issue 35 item 4)", () => {
    it("a limit below the capability floor plus the reserve → 422 budget_floor_exceeded with the reason; nothing learned, spawns unaffected", async () => {
      const { catalog, app: hono, budget, state } = app();
      const admin = await auth({ tenant: "*", roles: ["admin"] });
      // The floor is tool_list + tool_description; the test's reserve is 0, so 1 is below it.
      const res = await postLimit(hono, admin, {
        model: "openai/gpt-4.1",
        error:
          "Invalid 'tools': array too long. Expected an array with maximum length 1, but got 163 instead.",
      });
      expect(res.status).toBe(422);
      const problem = await res.json();
      expect(problem).toMatchObject({ code: "budget_floor_exceeded", maxTools: 1, floor: 2 });
      expect(problem.detail).toMatch(/below the capability floor/);
      expect(await state.listObservedToolLimits()).toEqual([]);
      expect((await budget.budgetForChain(["openai/gpt-4.1"], { catalog: catalog.begin() })).maxTools).toBe(
        128,
      );
      // At the floor it is learned.
      const at = await postLimit(hono, admin, {
        model: "openai/gpt-4.1",
        error: "Too many tools provided: 163 > 2",
      });
      expect(at.status).toBe(200);
    });

    it("the reserve counts: with VANCE_EXTERNAL_RESERVE 3 a limit of 4 is refused, 5 learned", async () => {
      const state = sqlite();
      const { catalog, logger } = setup({}, state);
      const observed = new ObservedToolLimits({ state, catalog, reserve: 3, logger, now: () => NOW });
      expect(await thrown(observed.learn("cortecs/x", "Too many tools provided: 163 > 4"))).toMatchObject({
        code: "budget_floor_exceeded",
        status: 422,
      });
      expect(await observed.learn("cortecs/x", "Too many tools provided: 163 > 5")).toBe(5);
    });

    it("a read token reporting 500 made-up endpoints stores nothing: 400 invalid_model each", async () => {
      const { app: hono, state } = app();
      const reader = await auth({ tenant: "acme", roles: ["read"] });
      const statuses = new Set<number>();
      for (let i = 0; i < 500; i++) {
        const res = await postLimit(hono, reader, { model: `made-up-${i}/m`, error: OPENAI_128 });
        statuses.add(res.status);
        if (i === 0) expect(await res.json()).toMatchObject({ code: "invalid_model" });
      }
      expect([...statuses]).toEqual([400]);
      expect(await state.listObservedToolLimits()).toEqual([]);
      // A known endpoint reported many times, under many models, is one row for the tenant.
      for (const slug of ["a", "b", "c"]) {
        expect((await postLimit(hono, reader, { model: `cortecs/${slug}`, error: OPENAI_128 })).status).toBe(
          200,
        );
      }
      expect((await state.listObservedToolLimits()).map((limit) => limit.key)).toEqual(["acme/cortecs"]);
    });

    it("an admin lists the learned limits and withdraws one; the budget drops it at once", async () => {
      const { catalog, app: hono, budget } = app();
      const platform = await auth({ tenant: "*", roles: ["admin"] });
      const acmeAdmin = await auth({ tenant: "acme", roles: ["admin", "read"] });
      await postLimit(hono, platform, { model: "cortecs/m", error: "Too many tools provided: 163 > 64" });
      await postLimit(hono, acmeAdmin, {
        model: "openai/gpt-4.1",
        error: "Too many tools provided: 163 > 40",
      });
      await postLimit(hono, await auth({ tenant: "other", roles: ["read"] }), {
        model: "openai/gpt-4.1",
        error: "Too many tools provided: 163 > 30",
      });

      const all = await hono.request("/v1/models/observed-limits", { headers: platform });
      expect(all.status).toBe(200);
      expect((await all.json()).limits).toEqual([
        {
          scope: "*",
          instance: "cortecs",
          model: "cortecs/m",
          maxTools: 64,
          observedAt: new Date(NOW).toISOString(),
        },
        {
          scope: "acme",
          instance: "openai",
          model: "openai/gpt-4.1",
          maxTools: 40,
          observedAt: new Date(NOW).toISOString(),
        },
        {
          scope: "other",
          instance: "openai",
          model: "openai/gpt-4.1",
          maxTools: 30,
          observedAt: new Date(NOW).toISOString(),
        },
      ]);
      const own = await (await hono.request("/v1/models/observed-limits", { headers: acmeAdmin })).json();
      expect(own.limits.map((limit: { scope: string }) => limit.scope)).toEqual(["acme"]);

      // A tenant's admin withdraws its own, never another tenant's or the platform's.
      const del = (path: string, headers: Record<string, string>) =>
        hono.request(`/v1/models/observed-limits/${path}`, { method: "DELETE", headers });
      expect((await del("other/openai", acmeAdmin)).status).toBe(403);
      expect((await del("*/cortecs", acmeAdmin)).status).toBe(403);
      expect(
        (await budget.budgetForChain(["openai/gpt-4.1"], { tenant: "acme", catalog: catalog.begin() }))
          .maxTools,
      ).toBe(40);
      expect((await del("acme/openai", acmeAdmin)).status).toBe(204);
      expect(
        (await budget.budgetForChain(["openai/gpt-4.1"], { tenant: "acme", catalog: catalog.begin() }))
          .maxTools,
      ).toBe(128);
      const again = await del("acme/openai", acmeAdmin);
      expect(again.status).toBe(404);
      expect(await again.json()).toMatchObject({ code: "not_found" });
      expect((await del("*/cortecs", platform)).status).toBe(204);
      expect((await budget.budgetForChain(["cortecs/m"], { catalog: catalog.begin() })).maxTools).toBeNull();
    });

    it("listing and withdrawing need the admin role", async () => {
      const { app: hono } = app();
      const reader = await auth({ tenant: "acme", roles: ["read", "write"] });
      expect((await hono.request("/v1/models/observed-limits", { headers: reader })).status).toBe(403);
      const res = await hono.request("/v1/models/observed-limits/acme/openai", {
        method: "DELETE",
        headers: reader,
      });
      expect(res.status).toBe(403);
      expect((await hono.request("/v1/models/observed-limits")).status).toBe(401);
    });
  });

  describe("errors", () => {
    it.each(["", "?chain=", "?chain=,%20,", "?chain=gpt-4.1", "?chain=openai/gpt-4.1,Bad/x"])(
      "GET /budget%s → 400 invalid_model",
      async (query) => {
        const { app: hono } = app();
        const res = await hono.request(`/v1/models/budget${query}`, {
          headers: await auth({ tenant: "acme", roles: ["read"] }),
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ code: "invalid_model" });
      },
    );

    it("POST /observed-limits with a text naming no limit → 422 no_limit_in_error", async () => {
      const { app: hono } = app();
      const res = await postLimit(hono, await auth({ tenant: "*", roles: ["admin"] }), {
        model: "cortecs/some-model",
        error: "Rate limit reached: 500 requests per minute",
      });
      expect(res.status).toBe(422);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "no_limit_in_error", status: 422 });
    });

    it("POST /observed-limits with a bad model id → 400 invalid_model; a bad body → 422 validation_failed", async () => {
      const { app: hono } = app();
      const admin = await auth({ tenant: "*", roles: ["admin"] });
      const bad = await postLimit(hono, admin, { model: "some-model", error: OPENAI_128 });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: "invalid_model" });
      const shape = await postLimit(hono, admin, { model: "cortecs/some-model" });
      expect(shape.status).toBe(422);
      expect(await shape.json()).toMatchObject({ code: "validation_failed" });
    });
  });

  describe("security", () => {
    it("GET /budget without a token → 401", async () => {
      const { app: hono } = app();
      const res = await hono.request("/v1/models/budget?chain=openai/gpt-4.1");
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "unauthenticated" });
    });

    it("POST /observed-limits without a token → 401", async () => {
      const { app: hono } = app();
      const res = await postLimit(hono, {}, { model: "cortecs/some-model", error: OPENAI_128 });
      expect(res.status).toBe(401);
    });

    it.each([
      ["a tenant's token without read", { tenant: "acme", roles: ["admin", "write"] }],
      ["a platform token without admin", { tenant: "*", roles: ["read", "write"] }],
    ] as [string, Claims][])(
      "POST /observed-limits with %s → 403, nothing learned",
      async (_name, claims) => {
        const { catalog, app: hono, budget } = app();
        const res = await postLimit(hono, await auth(claims), {
          model: "cortecs/some-model",
          error: OPENAI_128,
        });
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ code: "forbidden" });
        expect(
          (await budget.budgetForChain(["cortecs/some-model"], { catalog: catalog.begin() })).maxTools,
        ).toBeNull();
      },
    );
  });
});
