import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTarget, type Target } from "./support";

/**
 * Issue 35 item 4 against the real server: a `read` token's floods of stored records end at the
 * tenant's quota (429 `quota_exceeded`), what is stored is counted in the state file itself, and
 * another tenant's requests meanwhile are answered as before.
 */
describe("attack suite: stored records per tenant", () => {
  let target: Target;
  const PROCESS_QUOTA = 100;

  beforeAll(async () => {
    target = await startTarget({ VANCE_QUOTA_PROCESSES_PER_HOUR: String(PROCESS_QUOTA) });
  });

  afterAll(async () => {
    console.log(target?.note());
    await target?.stop();
  });

  /** Rows of the server's state file (read-only, beside the running server: WAL lets it). */
  function count(sql: string, ...params: string[]): number {
    const db = new Database(join(target.dataDir, "state.sqlite"), { readonly: true });
    try {
      return (db.prepare(sql).get(...params) as { n: number }).n;
    } finally {
      db.close();
    }
  }

  it(`a read token spawning 400 processes stores ${PROCESS_QUOTA}: the rest answer 429 quota_exceeded; another tenant still spawns`, async () => {
    const attacker = await target.token_("flooder", ["read"]);
    const victim = await target.token_("victim", ["read"]);
    const spawn = (tenant: string, token: string) =>
      target.request(`/v1/tenants/${tenant}/projects/p/processes`, {
        method: "POST",
        token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ models: [] }),
      });
    const statuses = await target.attack(
      "a read token spawns 400 processes, 8 at a time",
      async () => {
        const answers: number[] = [];
        const codes = new Set<string>();
        for (let round = 0; round < 50; round++) {
          const batch = await Promise.all(Array.from({ length: 8 }, () => spawn("flooder", attacker)));
          for (const answer of batch) {
            answers.push(answer.status);
            if (answer.status === 429) codes.add(((await answer.json()) as { code: string }).code);
            else await answer.body?.cancel();
          }
        }
        return { answers, codes };
      },
      ({ answers }) =>
        `${answers.filter((s) => s === 201).length} × 201, ${answers.filter((s) => s === 429).length} × 429`,
    );
    expect(statuses.answers.filter((status) => status === 201)).toHaveLength(PROCESS_QUOTA);
    expect(statuses.answers.filter((status) => status === 429)).toHaveLength(400 - PROCESS_QUOTA);
    expect([...statuses.codes]).toEqual(["quota_exceeded"]);
    expect(count("SELECT count(*) AS n FROM processes WHERE tenant = ?", "flooder")).toBe(PROCESS_QUOTA);
    const other = await spawn("victim", victim);
    expect(other.status).toBe(201);
  });

  it("a read token reporting 2,000 made-up endpoints stores no observed limit; 200 reports of one catalog endpoint store one", async () => {
    const attacker = await target.token_("flooder", ["read"]);
    const report = (model: string) =>
      target.request("/v1/models/observed-limits", {
        method: "POST",
        token: attacker,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model, error: "Too many tools provided: 163 > 64" }),
      });
    const answers = await target.attack(
      "a read token reports 2,000 made-up endpoints and 200 known ones",
      async () => {
        const statuses: number[] = [];
        for (let round = 0; round < 220; round++) {
          const batch = await Promise.all(
            Array.from({ length: 10 }, (_, i) =>
              report(round < 200 ? `made-up-${round}-${i}/m` : `openai/model-${round}-${i}`),
            ),
          );
          for (const answer of batch) {
            statuses.push(answer.status);
            await answer.body?.cancel();
          }
        }
        return statuses;
      },
      (statuses) =>
        `${statuses.filter((s) => s === 400).length} × 400, ${statuses.filter((s) => s === 200).length} × 200`,
    );
    expect(answers.slice(0, 2000).every((status) => status === 400)).toBe(true);
    expect(answers.slice(2000).every((status) => status === 200)).toBe(true);
    expect(count("SELECT count(*) AS n FROM observed_endpoint_limits WHERE limit_key LIKE 'flooder/%'")).toBe(
      1,
    );
  });

  it("a 4 MiB document that is no OpenAPI spec is refused: 413 outside specs/, 422 inside", async () => {
    const markdown = `# big\n${"x".repeat(4 * 1024 * 1024)}`;
    const outcome = await target.attack(
      "4 MiB of markdown as a document and as a spec",
      async () => ({
        outside: await target.putLarge(
          "/v1/tenants/flooder/projects/p/documents/documents/big.md",
          markdown,
          {
            contentType: "text/markdown",
          },
        ),
        inside: await target.request("/v1/tenants/flooder/projects/p/documents/specs/big.md", {
          method: "PUT",
          headers: { "content-type": "text/markdown" },
          body: markdown,
        }),
      }),
      ({ outside, inside }) => `${outside} outside specs/, ${inside.status} inside`,
    );
    expect(outcome.outside).toBe(413);
    expect(outcome.inside.status).toBe(422);
    expect(((await outcome.inside.json()) as { code: string }).code).toBe("validation_failed");
  });
});
