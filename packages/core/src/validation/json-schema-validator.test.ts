import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { THRASH_WINDOW_MS } from "../cache/tenant-byte-cache";
import { Errors } from "../errors";
import type { Logger } from "../ports/logger";
import {
  type CompiledJsonSchema,
  JSON_SCHEMA_CACHE_LIMITS,
  JsonSchemaValidator,
  jsonSchemaText,
  MAX_PATTERN_INSTRUCTIONS,
  OFFLOAD_MIN_NODES,
} from "./json-schema-validator";

const validator = new JsonSchemaValidator();
const compileJsonSchema = (schema: Record<string, unknown>) => validator.compile(schema);

function usable(schema: Record<string, unknown>): (value: unknown) => { path: string; message: string }[] {
  const compiled = compileJsonSchema(schema);
  if (!compiled.ok) throw new Error(`expected a usable schema: ${compiled.message}`);
  return compiled.validate;
}

function unusable(schema: Record<string, unknown>): string {
  const compiled: CompiledJsonSchema = compileJsonSchema(schema);
  if (compiled.ok) throw new Error("expected an unusable schema");
  return compiled.message;
}

describe("JsonSchemaValidator.compile: field errors", () => {
  it("maps failures to dotted paths, naming missing and additional properties", () => {
    const validate = usable({
      type: "object",
      properties: { id: {}, user: { type: "object", properties: { age: { type: "integer" } } } },
      required: ["id"],
      additionalProperties: false,
    });
    expect(validate({ user: { age: 1 } })).toEqual([
      { path: "id", message: "must have required property 'id'" },
    ]);
    expect(validate({ id: 1, user: { age: "x" }, extra: true })).toEqual([
      { path: "extra", message: "must NOT have additional properties" },
      { path: "user.age", message: "must be integer" },
    ]);
    expect(validate({ id: 1 })).toEqual([]);
  });

  it("validate answers the same for a usable schema and throws for an unusable one", () => {
    expect(validator.validate({ type: "string" }, 1)).toEqual([{ path: "", message: "must be string" }]);
    expect(() => validator.validate({ type: "strnig" }, 1)).toThrow(/not a valid JSON Schema/);
  });

  it("inputSchemaProblem wants a usable object schema", () => {
    expect(validator.inputSchemaProblem({ type: "object" })).toBeNull();
    expect(validator.inputSchemaProblem({ type: "string" })).toMatch(/root must be an object schema/);
    expect(validator.inputSchemaProblem({ type: "strnig" })).toMatch(/not a valid JSON Schema/);
  });

  it("reads a 2020-12 or draft-07 dialect declaration as draft-07 instead of failing", () => {
    for (const $schema of [
      "https://json-schema.org/draft/2020-12/schema",
      "http://json-schema.org/draft-07/schema#",
    ]) {
      const validate = usable({
        $schema,
        type: "object",
        $defs: { n: { type: "number" } },
        properties: { a: { $ref: "#/$defs/n" } },
      });
      expect(validate({ a: "x" })).toEqual([{ path: "a", message: "must be number" }]);
    }
  });

  it("an invalid schema is a value naming the problem, not a throw", () => {
    expect(unusable({ type: "strnig" })).toMatch(/not a valid JSON Schema/);
    expect(unusable({ type: "string", minLength: "three" })).toMatch(/minLength/);
    expect(unusable({ $async: true, type: "string" })).toMatch(/\$async/);
  });

  it("a schema nested too deeply to compile is unusable, not a crash", () => {
    // JSON.parse builds what neither Ajv nor JSON.stringify can walk back on the stack.
    const depth = 100_000;
    const text = `${'{"properties":{"a":'.repeat(depth)}{"type":"string"}${"}}".repeat(depth)}`;
    expect(unusable(JSON.parse(text))).toMatch(/not a usable JSON Schema/);
  });
});

describe("JsonSchemaValidator.compile: patterns run on RE2 (linear time)", () => {
  it("a catastrophic-backtracking pattern checks a 10,000-character input promptly", () => {
    const validate = usable({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } });
    // Backtracking needs ~2^10000 steps for this input; RE2 needs one pass.
    expect(validate({ s: `${"a".repeat(10_000)}!` })).toEqual([
      { path: "s", message: 'must match pattern "^(a+)+$"' },
    ]);
    expect(validate({ s: "a".repeat(10_000) })).toEqual([]);
  });

  it("patternProperties run on RE2 too, and JavaScript escapes keep their meaning", () => {
    const validate = usable({
      type: "object",
      patternProperties: { "^(x+)+$": { type: "integer" }, "^\\u0041\\d{2}$": { type: "string" } },
    });
    expect(validate({ [`${"x".repeat(5_000)}`]: "no" })).toEqual([
      { path: "x".repeat(5_000), message: "must be integer" },
    ]);
    expect(validate({ A12: 3 })).toEqual([{ path: "A12", message: "must be string" }]);
  });

  it("two patterns in one schema each keep their own meaning", () => {
    const validate = usable({
      type: "object",
      properties: { a: { type: "string", pattern: "^a$" }, b: { type: "string", pattern: "^b$" } },
    });
    expect(validate({ a: "a", b: "b" })).toEqual([]);
    expect(validate({ a: "b", b: "a" }).map((error) => error.path)).toEqual(["a", "b"]);
  });

  it("a pattern RE2 cannot run (backreference, lookaround) makes the schema unusable, naming it", () => {
    for (const pattern of ["^(a)\\1$", "^(?=a)a$", "(?<!x)y"]) {
      const message = unusable({ type: "string", pattern });
      expect(message).toContain(JSON.stringify(pattern));
      expect(message).toContain("RE2");
    }
    expect(unusable({ type: "object", patternProperties: { "(?=k)": { type: "string" } } })).toContain(
      '"(?=k)"',
    );
  });

  it("patterns whose RE2 programs are too large in all make the schema unusable", () => {
    const properties = Object.fromEntries(
      Array.from({ length: 10 }, (_, index) => [
        `p${index}`,
        { type: "string", pattern: `^${index}.{1,999}$` },
      ]),
    );
    expect(unusable({ type: "object", properties })).toContain(`more than ${MAX_PATTERN_INSTRUCTIONS}`);
  });
});

describe("JsonSchemaValidator.compile: no shared $id registry, no remote $ref", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("tenant A's $id does not change what tenant B's schema with the same $id validates", () => {
    const tenantA = usable({ $id: "x", type: "string" });
    const tenantB = usable({ $id: "x", type: "number" });
    expect(tenantA("text")).toEqual([]);
    expect(tenantA(1)).toEqual([{ path: "", message: "must be string" }]);
    expect(tenantB(1)).toEqual([]);
    expect(tenantB("text")).toEqual([{ path: "", message: "must be number" }]);
  });

  it("a $ref to another schema's $id does not resolve: the schema is unusable", () => {
    usable({ $id: "https://tenant-a.example/secret.json", type: "string", const: "a" });
    usable({ $id: "shared", type: "integer" });
    expect(unusable({ $ref: "https://tenant-a.example/secret.json" })).toMatch(/can't resolve reference/);
    expect(unusable({ type: "object", properties: { n: { $ref: "shared" } } })).toMatch(
      /can't resolve reference shared/,
    );
  });

  it("a $ref within the schema itself resolves, by pointer and by its own nested $id", () => {
    const validate = usable({
      $id: "https://tenant-b.example/root.json",
      definitions: { id: { $id: "id.json", type: "string", minLength: 2 } },
      type: "object",
      properties: { a: { $ref: "#/definitions/id" }, b: { $ref: "id.json" } },
    });
    expect(validate({ a: "x", b: "y" }).map((error) => error.path)).toEqual(["a", "b"]);
  });

  it("a remote $ref is never fetched: the schema is unusable", () => {
    const fetch = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", fetch);
    expect(unusable({ $ref: "https://schemas.example/remote.json" })).toMatch(/can't resolve reference/);
    expect(
      unusable({ $id: "https://schemas.example/base.json", properties: { a: { $ref: "other.json" } } }),
    ).toMatch(/can't resolve reference/);
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe("JsonSchemaValidator.compile: memory stays flat", () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const heapMiB = () => {
    for (let round = 0; round < 3; round++) gc();
    return process.memoryUsage().heapUsed / 2 ** 20;
  };
  /** A distinct small client-tool schema per index, with a pattern, as spawns bring them. */
  const clientSchema = (index: number) => ({
    $id: `tool-${index}`,
    type: "object",
    properties: {
      [`id_${index}`]: { type: "string", pattern: `^t${index}-[a-z0-9]+$`, description: `Record ${index}.` },
    },
    required: [`id_${index}`],
  });

  it("compiling and using 1,600 distinct schemas keeps the heap bounded", { timeout: 120_000 }, () => {
    // A shared, never-cleared compiler keeps every schema: ~7 KiB each here, ~7 MiB over the last
    // 1,000. A cache bounded to 100 entries stops growing once full (at the 100th schema); the
    // instance's default bound (1,024) is the same rule at a size that makes the test slow.
    const bounded = new JsonSchemaValidator({ maxEntries: 100, maxBytes: JSON_SCHEMA_CACHE_LIMITS.maxBytes });
    const start = heapMiB();
    let warm = start;
    for (let index = 0; index < 1_600; index++) {
      const compiled = bounded.compile(clientSchema(index));
      if (!compiled.ok) throw new Error(`expected a usable schema: ${compiled.message}`);
      expect(compiled.validate({ [`id_${index}`]: `t${index}-ok` })).toEqual([]);
      if (index === 599) warm = heapMiB();
    }
    const end = heapMiB();
    expect(bounded.cacheReport()).toMatchObject({ entries: 100, misses: 1_600 });
    expect(end - warm).toBeLessThan(3.5);
    expect(end - start).toBeLessThan(20);
  });
});

describe("JsonSchemaValidator: one cache per instance, an engine loaded lazily", () => {
  it("counts its own reads: each instance has its own cache", () => {
    const mine = new JsonSchemaValidator({ maxEntries: 8, maxBytes: 1024 * 1024 });
    const other = new JsonSchemaValidator();
    const schema = { type: "object", properties: { instanceTest: { type: "integer" } } };
    expect(mine.compile(schema).ok).toBe(true);
    expect(mine.compile(schema).ok).toBe(true);
    expect(mine.cacheReport()).toMatchObject({ hits: 1, misses: 1, entries: 1, maxEntries: 8 });
    expect(other.cacheReport()).toMatchObject({ hits: 0, misses: 0, entries: 0 });

    other.compile(schema);
    expect(other.inputSchemaProblem(schema)).toBeNull();
    expect(other.cacheReport()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
    expect(mine.cacheReport()).toMatchObject({ hits: 1, misses: 1 });
  });

  it("compiles nothing before the engine is loaded, and the first validation awaits the load", async () => {
    vi.resetModules();
    const fresh = await import("./json-schema-validator");
    expect(fresh.jsonSchemaEngineLoaded()).toBe(false);
    const validator = new fresh.JsonSchemaValidator();
    expect(() => validator.compile({ type: "string" })).toThrow(/not loaded yet/);
    await validator.ready();
    expect(fresh.jsonSchemaEngineLoaded()).toBe(true);
    const compiled = validator.compile({ type: "string", pattern: "^a+$" });
    expect(compiled.ok && compiled.validate("b")).toEqual([
      { path: "", message: 'must match pattern "^a+$"' },
    ]);
  });
});

describe("JsonSchemaValidator.compileAsTenant: each tenant's share of the serving thread", () => {
  /** A schema no other test compiled: its property name is `tag`. */
  const fresh = (tag: string) => ({
    type: "object",
    properties: { [tag]: { type: "string", pattern: "^[a-z]+$" } },
  });
  const shares = {
    turnsPerTenant: 1,
    queuedPerTenant: 1,
    maxWaitMs: 30_000,
    restPerCompile: 2,
    msPerMinute: 60_000,
  };

  it("compiles one schema of a tenant at a time; one more waits, the next is refused 429 busy, another tenant is not", async () => {
    const schemas = new JsonSchemaValidator(undefined, shares);
    const many = Array.from({ length: 20 }, (_, i) => fresh(`first${i}`));
    const first = schemas.compileAsTenant("evil", many);
    const second = schemas.compileAsTenant("evil", [fresh("second")]);
    await expect(schemas.compileAsTenant("evil", [fresh("third")])).rejects.toMatchObject({
      code: "busy",
      status: 429,
    });
    const [other] = await schemas.compileAsTenant("good", [fresh("other")]);
    expect(other?.ok).toBe(true);
    expect((await first).every((compiled) => compiled.ok)).toBe(true);
    expect((await second)[0]?.ok).toBe(true);
  });

  it("answers 429 rate_limited once a tenant spent its compile time, but still answers what is cached", async () => {
    const schemas = new JsonSchemaValidator(undefined, { ...shares, msPerMinute: 0.001 });
    const known = fresh("known");
    expect((await schemas.compileAsTenant("evil", [known]))[0]?.ok).toBe(true);
    await expect(schemas.compileAsTenant("evil", [fresh("new")])).rejects.toMatchObject({
      code: "rate_limited",
      status: 429,
      extra: { retryAfterSeconds: expect.any(Number) },
    });
    expect((await schemas.compileAsTenant("evil", [known]))[0]?.ok).toBe(true);
    expect((await schemas.compileAsTenant("good", [fresh("new")]))[0]?.ok).toBe(true);
  });

  it("20 concurrent calls of one tenant with the same new schema (20 invokes of one tool) compile it once, in one turn, and none is refused", async () => {
    const schemas = new JsonSchemaValidator(undefined, shares);
    const schema = fresh("same");
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => schemas.compileAsTenant("acme", [schema])),
    );
    expect(answers.every(([compiled]) => compiled?.ok)).toBe(true);
    expect(schemas.cacheReport()).toMatchObject({ entries: 1 });
  });

  it("compiledNow answers a schema compiled from another object of the same text, synchronously, and compiles nothing it does not hold", async () => {
    const schemas = new JsonSchemaValidator(undefined, shares);
    const stored = fresh("now");
    expect(schemas.compiledNow(stored)).toBeUndefined();
    expect(schemas.cacheReport()).toMatchObject({ entries: 0 });
    expect((await schemas.compileAsTenant("acme", [stored]))[0]?.ok).toBe(true);
    // A re-read document's schema is a new object: the text finds it.
    const reread = JSON.parse(JSON.stringify(stored)) as Record<string, unknown>;
    const compiled = schemas.compiledNow(reread);
    if (!compiled?.ok) throw new Error("expected the compiled schema");
    expect(compiled.validate({ now: "abc" })).toEqual([]);
    expect(compiled.validate({ now: "ABC" })).toEqual([
      { path: "now", message: 'must match pattern "^[a-z]+$"' },
    ]);
    expect(schemas.cacheReport()).toMatchObject({ entries: 1 });
  });

  it("compiledNow given the text computed once for a tool finds the schema by that text, not by the object", async () => {
    const schemas = new JsonSchemaValidator(undefined, shares);
    const listed = fresh("listed");
    const text = jsonSchemaText(listed);
    if (text === undefined) throw new Error("expected the schema's text");
    expect(schemas.compiledNow(listed, text)).toBeUndefined();
    expect((await schemas.compileAsTenant("acme", [listed]))[0]?.ok).toBe(true);
    const compiled = schemas.compiledNow(listed, text);
    if (!compiled?.ok) throw new Error("expected the compiled schema");
    expect(compiled.validate({ listed: "ABC" })).toEqual([
      { path: "listed", message: 'must match pattern "^[a-z]+$"' },
    ]);
    // The text decides: another schema's text finds nothing, whatever object is given with it.
    expect(schemas.compiledNow(listed, jsonSchemaText(fresh("other")))).toBeUndefined();
    expect(jsonSchemaText(JSON.parse(text) as Record<string, unknown>)).toBe(text);
  });

  it("inTenantTurn answers work whose schemas are all cached at once, however busy the tenant's turns; new ones wait their turn", async () => {
    const schemas = new JsonSchemaValidator(undefined, shares);
    const known = fresh("parsed");
    expect(schemas.compile(known).ok).toBe(true);
    const first = schemas.compileAsTenant("acme", [fresh("busy1")]);
    const second = schemas.compileAsTenant("acme", [fresh("busy2")]);
    // The turn and its one waiting place are taken: cached work still answers, new work is refused.
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => schemas.inTenantTurn("acme", () => schemas.inputSchemaProblem(known))),
    );
    expect(answers).toEqual(Array(20).fill(null));
    await expect(
      schemas.inTenantTurn("acme", () => schemas.inputSchemaProblem(fresh("waits"))),
    ).rejects.toMatchObject({ code: "busy" });
    await Promise.all([first, second]);
    expect(await schemas.inTenantTurn("acme", () => schemas.inputSchemaProblem(fresh("later")))).toBeNull();
    expect(schemas.compile(fresh("later")).ok).toBe(true);
  });
});

describe("JsonSchemaValidator.inputSchemaProblemsAsTenant: large schemas checked off the serving thread", () => {
  /** An object schema of about `2 × count` nodes. */
  const wide = (tag: string, count: number) => ({
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`${tag}_${i}`, { type: "integer" }]),
    ),
  });

  it("sends a schema of OFFLOAD_MIN_NODES and more to the offload once, compiles nothing of it here, and keeps its verdict", async () => {
    const asked: string[] = [];
    const offloaded = new JsonSchemaValidator(undefined, undefined, {
      offload: async (tenant, schema) => {
        const first = Object.keys(schema.properties as object)[0];
        asked.push(`${tenant}:${first}`);
        return first === "bad_0" ? "not a usable JSON Schema: offload said so" : null;
      },
    });
    const large = wide("big", OFFLOAD_MIN_NODES);
    const bad = wide("bad", OFFLOAD_MIN_NODES);
    const small = { type: "object", properties: { q: { type: "string" } } };
    const notObject = { type: "string" };
    expect(await offloaded.inputSchemaProblemsAsTenant("acme", [small, large, notObject, bad])).toEqual([
      null,
      null,
      'the root must be an object schema (type: "object")',
      "not a usable JSON Schema: offload said so",
    ]);
    expect(asked).toEqual(["acme:big_0", "acme:bad_0"]);
    // Only the small schemas compiled here.
    expect(offloaded.cacheReport()).toMatchObject({ entries: 2 });
    expect(await offloaded.inputSchemaProblemsAsTenant("other", [bad, large])).toEqual([
      "not a usable JSON Schema: offload said so",
      null,
    ]);
    expect(asked).toHaveLength(2);
  });

  it("keeps tenant B's verdict while tenant A has more schemas checked than the verdicts kept hold", async () => {
    const asked: string[] = [];
    const offloaded = new JsonSchemaValidator(
      { maxEntries: 1024, maxBytes: 32 * 1024 * 1024, tenantShare: 0.25 },
      undefined,
      {
        offload: async (tenant, schema) => {
          asked.push(`${tenant}:${Object.keys(schema.properties as object)[0]}`);
          return null;
        },
      },
    );
    const mine = wide("mine", OFFLOAD_MIN_NODES);
    await offloaded.inputSchemaProblemsAsTenant("tenant-b", [mine]);
    // 800 schemas of about 14 KB as counted: more than the 8 MiB of verdicts the instance keeps.
    for (let i = 0; i < 800; i++)
      await offloaded.inputSchemaProblemsAsTenant("tenant-a", [wide(`a${i}`, OFFLOAD_MIN_NODES)]);
    await offloaded.inputSchemaProblemsAsTenant("tenant-b", [mine]);
    // B's verdict was kept: its schema was checked once.
    expect(asked.filter((entry) => entry.startsWith("tenant-b"))).toEqual(["tenant-b:mine_0"]);
    // A's first verdict went (its own share is 2 MiB): asked again.
    await offloaded.inputSchemaProblemsAsTenant("tenant-a", [wide("a0", OFFLOAD_MIN_NODES)]);
    expect(asked.filter((entry) => entry === "tenant-a:a0_0")).toHaveLength(2);
  });

  it("without an offload, or for a schema compiled here already, answers as compileAsTenant does", async () => {
    const plain = new JsonSchemaValidator();
    const large = wide("plain", OFFLOAD_MIN_NODES);
    expect(await plain.inputSchemaProblemsAsTenant("acme", [large, { type: "array" }])).toEqual([
      null,
      'the root must be an object schema (type: "object")',
    ]);
    expect(plain.cacheReport()).toMatchObject({ entries: 2 });

    let asked = 0;
    const offloaded = new JsonSchemaValidator(undefined, undefined, {
      offload: async () => {
        asked += 1;
        return null;
      },
    });
    const known = wide("known", OFFLOAD_MIN_NODES);
    expect(offloaded.compile(known).ok).toBe(true);
    expect(await offloaded.inputSchemaProblemsAsTenant("acme", [known])).toEqual([null]);
    expect(asked).toBe(0);
  });
});

describe("JsonSchemaValidator: each tenant at most its share of the compiled schemas", () => {
  const schemaNumbered = (i: number) => ({
    type: "object",
    properties: { [`field${i}`]: { type: "integer" } },
  });

  it("keeps tenant B's compiled schema while tenant A compiles more schemas than the cache keeps", async () => {
    // 16 entries, 4 for each tenant.
    const schemas = new JsonSchemaValidator({
      maxEntries: 16,
      maxBytes: 32 * 1024 * 1024,
      tenantShare: 0.25,
    });
    const mine = { type: "object", properties: { tenantB: { type: "string" } } };
    await schemas.compileAsTenant("tenant-b", [mine]);
    await schemas.compileAsTenant(
      "tenant-a",
      Array.from({ length: 24 }, (_, i) => schemaNumbered(i)),
    );
    for (let i = 24; i < 48; i++) schemas.asTenant("tenant-a", () => schemas.compile(schemaNumbered(i)));

    const before = schemas.cacheReport();
    expect(schemas.compile(mine).ok).toBe(true);
    // A hit: B's schema was not compiled again.
    expect(schemas.cacheReport()).toMatchObject({ hits: before.hits + 1, misses: before.misses });
    // A kept only its share: its last 4 schemas; its earlier ones were its own to evict.
    expect(schemas.cacheReport()).toMatchObject({ entries: 1 + 4, maxEntries: 16 });
    schemas.compile(schemaNumbered(0));
    expect(schemas.cacheReport()).toMatchObject({ misses: before.misses + 1 });
  });

  it("charges a schema two tenants use to the tenant that compiled it first", async () => {
    const schemas = new JsonSchemaValidator({
      maxEntries: 16,
      maxBytes: 32 * 1024 * 1024,
      tenantShare: 0.25,
    });
    const shared = { type: "object", properties: { both: { type: "boolean" } } };
    await schemas.compileAsTenant("tenant-b", [shared]);
    await schemas.compileAsTenant("tenant-a", [shared]);
    // A's own four schemas fit its share beside the shared one, which counts against B's.
    for (let i = 0; i < 4; i++) schemas.asTenant("tenant-a", () => schemas.compile(schemaNumbered(i)));
    const before = schemas.cacheReport();
    schemas.compile(shared);
    expect(schemas.cacheReport()).toMatchObject({ hits: before.hits + 1, entries: 5 });
  });
});

describe("JsonSchemaValidator: large schemas that must compile are compiled by the offload, and only loaded here", () => {
  /** A large schema (over OFFLOAD_MIN_NODES) with patterns, a $ref, an enum of objects and required names. */
  const large = (tag: string) => ({
    type: "object",
    required: [`${tag}_0`, "choice"],
    additionalProperties: false,
    definitions: { code: { type: "string", pattern: `^${tag}[0-9]{2}$` } },
    properties: {
      choice: { enum: [{ kind: "a" }, { kind: "b" }] },
      code: { $ref: "#/definitions/code" },
      ...Object.fromEntries(
        Array.from({ length: 120 }, (_, i) => [
          `${tag}_${i}`,
          i % 3 === 0
            ? { type: "string", pattern: `^${tag}${i % 30}[a-z]*$`, maxLength: 12 }
            : { type: "integer", minimum: i },
        ]),
      ),
    },
  });
  /** The worker's side, in this thread: a validator of its own that answers code. */
  const offloaded = () => {
    const worker = new JsonSchemaValidator();
    const asked: string[] = [];
    const here = new JsonSchemaValidator(undefined, undefined, {
      offloadCompile: async (tenant, schema) => {
        asked.push(tenant);
        return worker.compileSource(schema);
      },
    });
    return { here, asked };
  };
  const values = (tag: string) => [
    { [`${tag}_0`]: `${tag}0abc`, choice: { kind: "a" }, code: `${tag}42` },
    { [`${tag}_0`]: "nope", choice: { kind: "c" }, code: "x", [`${tag}_1`]: 0, extra: true },
    {},
    { [`${tag}_0`]: `${tag}0${"z".repeat(20)}`, choice: { kind: "b" }, [`${tag}_2`]: "two" },
  ];

  it("answers the same field errors as a validator compiled here, compiles nothing large here, and asks once per schema text", async () => {
    const { here, asked } = offloaded();
    const schema = large("lg");
    const [loaded] = await here.compileAsTenant("acme", [schema]);
    const [again] = await here.compileAsTenant("acme", [large("lg")]);
    const compiledHere = new JsonSchemaValidator().compile(schema);
    if (!loaded?.ok || !compiledHere.ok || !again?.ok) throw new Error("expected usable schemas");
    for (const value of values("lg")) expect(loaded.validate(value)).toEqual(compiledHere.validate(value));
    expect(loaded.validate(values("lg")[1]).length).toBeGreaterThan(3);
    expect(asked).toEqual(["acme"]);
    expect(here.compileCounts()).toEqual({ servingThread: 0, servingThreadLarge: 0, worker: 1 });
  });

  it("a schema the worker finds unusable is unusable here with its reason; small schemas still compile here", async () => {
    const { here } = offloaded();
    const broken = { ...large("br"), properties: { ...large("br").properties, ref: { $ref: "#/nowhere" } } };
    const small = { type: "object", properties: { q: { type: "string" } } };
    const [unusableOne, smallOne] = await here.compileAsTenant("acme", [broken, small]);
    expect(unusableOne).toMatchObject({ ok: false, message: expect.stringMatching(/nowhere/) });
    expect(smallOne?.ok).toBe(true);
    expect(here.compileCounts()).toEqual({ servingThread: 1, servingThreadLarge: 0, worker: 1 });
  });

  it("work in a tenant's turn (a tool document's check) finds its large schema compiled by the offload", async () => {
    const { here, asked } = offloaded();
    const schema = large("doc");
    expect(await here.inTenantTurn("acme", () => here.inputSchemaProblem(schema))).toBeNull();
    expect(asked).toEqual(["acme"]);
    expect(here.compileCounts()).toMatchObject({ servingThreadLarge: 0, worker: 1 });
  });

  it("work outside a turn (a stored document's parse on a read) compiles its large schema on the worker, its small ones here, and answers as before", async () => {
    const { here, asked } = offloaded();
    const small = { type: "object", properties: { q: { type: "string" } } };
    const work = () => [here.inputSchemaProblem(large("rd")), here.inputSchemaProblem(small)];
    // Ten reads at once (a listing and calls on a cold instance): one compile on the worker.
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => here.asTenantLargeOnWorker("acme", work)),
    );
    expect(answers).toEqual(Array.from({ length: 10 }, () => [null, null]));
    expect(asked).toEqual(["acme"]);
    expect(here.compileCounts()).toEqual({ servingThread: 1, servingThreadLarge: 0, worker: 1 });
    const compiled = here.compiledNow(large("rd"));
    const compiledHere = new JsonSchemaValidator().compile(large("rd"));
    if (!compiled?.ok || !compiledHere.ok) throw new Error("expected usable schemas");
    for (const value of values("rd")) expect(compiled.validate(value)).toEqual(compiledHere.validate(value));
    // Known now: the next read compiles nothing and asks nobody.
    expect(await here.asTenantLargeOnWorker("acme", work)).toEqual([null, null]);
    expect(asked).toEqual(["acme"]);
  });

  it("a large schema the worker finds unusable makes the read's check answer its reason, compiled nowhere here", async () => {
    const { here } = offloaded();
    const broken = { ...large("bx"), properties: { ...large("bx").properties, ref: { $ref: "#/nowhere" } } };
    const problem = await here.asTenantLargeOnWorker("acme", () => here.inputSchemaProblem(broken));
    expect(problem).toMatch(/nowhere/);
    expect(here.compileCounts()).toEqual({ servingThread: 0, servingThreadLarge: 0, worker: 1 });
  });

  it("a worker refusing (429 busy) refuses the read; a worker failing otherwise leaves the compile here", async () => {
    const refusing = new JsonSchemaValidator(undefined, undefined, {
      offloadCompile: async () => {
        throw Errors.busy("queue full");
      },
    });
    await expect(
      refusing.asTenantLargeOnWorker("acme", () => refusing.inputSchemaProblem(large("rf"))),
    ).rejects.toMatchObject({ code: "busy" });
    const failing = new JsonSchemaValidator(undefined, undefined, {
      offloadCompile: async () => {
        throw new Error("worker died");
      },
    });
    expect(
      await failing.asTenantLargeOnWorker("acme", () => failing.inputSchemaProblem(large("fl"))),
    ).toBeNull();
    expect(failing.compileCounts()).toEqual({ servingThread: 1, servingThreadLarge: 1, worker: 0 });
  });

  it("without an offload a large schema compiles here, and is counted so", async () => {
    const here = new JsonSchemaValidator();
    await here.compileAsTenant("acme", [large("nl")]);
    expect(here.compileCounts()).toEqual({ servingThread: 1, servingThreadLarge: 1, worker: 0 });
  });
});

describe("JsonSchemaValidator: a tenant thrashing its share of compiled schemas is logged", () => {
  it("writes one cache_thrash WARN line (cache 'jsonSchemas') per tenant and window, counted in thrashes", () => {
    const lines: { event: string; fields: Readonly<Record<string, unknown>> | undefined }[] = [];
    const logger: Logger = { info: () => {}, warn: (event, fields) => lines.push({ event, fields }) };
    let now = 1_000;
    // About 5 KiB per compiled schema: a quarter of 100 KiB holds four or five of them.
    const compiler = new JsonSchemaValidator(
      { maxEntries: 1000, maxBytes: 100 * 1024, tenantShare: 0.25 },
      undefined,
      { logger, now: () => now },
    );
    const schema = (tag: string, i: number) => ({
      type: "object",
      properties: { [`${tag}${i}`]: { type: "string" } },
    });
    const compileAs = (tenant: string, tag: string, from: number, to: number) => {
      for (let i = from; i < to; i++)
        expect(compiler.asTenant(tenant, () => compiler.compile(schema(tag, i))).ok).toBe(true);
    };
    const thrashLines = () => lines.filter((line) => line.event === "cache_thrash");

    // Tenant B's three schemas fit its share, compiled twice: nothing evicted, nothing logged.
    compileAs("tenant-b", "b", 0, 3);
    compileAs("tenant-b", "b", 0, 3);
    expect(thrashLines()).toEqual([]);

    // Tenant A compiles 20 schemas through its share: its own evict its own.
    compileAs("tenant-a", "a", 0, 20);
    expect(thrashLines()).toHaveLength(1);
    expect(thrashLines()[0]!.fields).toMatchObject({
      tenant: "tenant-a",
      cache: "jsonSchemas",
      shareBytes: 25 * 1024,
      windowSeconds: THRASH_WINDOW_MS / 1000,
    });
    expect(compiler.cacheReport().thrashes).toBe(1);

    // Still thrashing in the same window: no second line.
    compileAs("tenant-a", "a", 20, 40);
    expect(thrashLines()).toHaveLength(1);
    // The next window: one more line.
    now += THRASH_WINDOW_MS;
    compileAs("tenant-a", "a", 40, 60);
    expect(thrashLines()).toHaveLength(2);
    expect(compiler.cacheReport().thrashes).toBe(2);
    expect(thrashLines().every((line) => line.fields?.tenant === "tenant-a")).toBe(true);
  });
});
