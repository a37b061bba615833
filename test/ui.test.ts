import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StateStore } from "@vance/core";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import type { TokenVerifier } from "../functions/api/identity/verifier";
import { stateStore } from "../functions/api/services";
import { REPLACE_SESSION_HEADER } from "../functions/api/ui/assets";
import { SESSION_COOKIE, UI_CSP } from "../functions/api/ui/routes";
import { SECRET, testApp } from "./support/app";
import { PRIMARY_TOOLS, PROJECT, packsCurrent, seedProject, T, TENANT, token } from "./support/ui-project";

let app: Awaited<ReturnType<typeof testApp>>["app"];
let verifier: TokenVerifier;
let state: StateStore;
const PAGE = `/ui/tenants/${TENANT}/projects/${PROJECT}`;

/** A listing session for `bearer`: the cookie `POST /ui/session` sets. */
async function session(bearer: string): Promise<string> {
  const res = await app.request("/ui/session", {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}` },
  });
  expect(res.status).toBe(204);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

async function page(path: string, cookie?: string) {
  const res = await app.request(path, { headers: cookie ? { cookie } : {} });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vance-ui-"));
  state = await stateStore(loadConfig({ VANCE_DATA_DIR: dataDir }));
  let services: Awaited<ReturnType<typeof testApp>>["services"];
  ({ app, services } = await testApp({ dataDir, state }));
  verifier = services.verifier;
  await seedProject(app);
  await packsCurrent(app, PROJECT);
});

describe("the listing's session (API.md 'Web listing')", () => {
  it("trades a bearer token for a read-only, HttpOnly, SameSite=Strict cookie of at most an hour under /ui", async () => {
    const res = await app.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${await token(TENANT, ["read", "write", "admin"], 600)}` },
    });
    expect(res.status).toBe(204);
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/ui(;|$)/);
    // Never past the token it came from.
    expect(Number(/Max-Age=(\d+)/.exec(cookie)?.[1])).toBeLessThanOrEqual(600);
    // The session's token is the listing's own audience: /v1 refuses it whatever the route.
    const minted = cookie.split(";")[0]!.slice(SESSION_COOKIE.length + 1);
    const headers = { authorization: `Bearer ${minted}` };
    const answers = [
      await app.request(`${T}/tools/sneaky`, {
        method: "PUT",
        headers: { ...headers, "content-type": "application/yaml" },
        body: "type: doc_lookup\ndescription: x\nparameters: { path: a.md }\n",
      }),
      await app.request(`${T}/tools`, { headers }),
      await app.request(`${T}/tools/${PRIMARY_TOOLS[0]}/invoke`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ params: {} }),
      }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toMatch(
        /^Bearer error="invalid_token", error_description="the token is a web listing session/,
      );
      expect((await answer.json()).detail).toBe(
        "the token is a web listing session; the API takes bearer tokens only",
      );
    }
  });

  it("answers the API's problems: no token 401, a token without 'read' 403, another site's fetch 403", async () => {
    const none = await app.request("/ui/session", { method: "POST" });
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toBe("application/problem+json");
    expect((await none.json()).code).toBe("unauthenticated");
    const writeOnly = await app.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${await token(TENANT, ["write"])}` },
    });
    expect(writeOnly.status).toBe(403);
    const crossSite = await app.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${await token(TENANT, ["read"])}`, "sec-fetch-site": "cross-site" },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get("set-cookie")).toBeNull();
  });

  it("a page without a session asks for a token (401) and names how to give it", async () => {
    const { status, html } = await page(PAGE);
    expect(status).toBe(401);
    expect(html).toContain('data-session="missing"');
    expect(html).toContain("#token=");
  });

  it("another tenant's page is the API's 403 forbidden, with its detail", async () => {
    const cookie = await session(await token("globex", ["read"]));
    const ui = await page(PAGE, cookie);
    const api = await app.request(`${T}/tools`, {
      headers: { authorization: `Bearer ${await token("globex", ["read"])}` },
    });
    const problem = await api.json();
    expect(api.status).toBe(403);
    expect(ui.status).toBe(403);
    expect(ui.html).toContain(`403 forbidden`);
    expect(ui.html).toContain(problem.detail.replace(/'/g, "&#39;"));
  });

  it("never replaces a session for another tenant unless the user confirmed it (a planted #token= link)", async () => {
    const mine = await session(await token(TENANT, ["read"]));
    const trade = (bearer: string, headers: Record<string, string> = {}) =>
      app.request("/ui/session", {
        method: "POST",
        headers: { authorization: `Bearer ${bearer}`, cookie: mine, ...headers },
      });
    const planted = await trade(await token("evil", ["read"]));
    expect(planted.status).toBe(409);
    expect(planted.headers.get("set-cookie")).toBeNull();
    expect(await planted.json()).toMatchObject({
      code: "session_conflict",
      signedIn: TENANT,
      offered: "evil",
      detail: expect.stringContaining("signed in for tenant 'acme'; this token is for tenant 'evil'"),
    });
    // The session is still the user's.
    expect((await page(PAGE, mine)).status).toBe(200);
    // The same tenant again (a renewal, other roles) needs no confirmation.
    expect((await trade(await token(TENANT, ["read", "write"]))).status).toBe(204);
    // Confirmed by the user (the page's script sends the header after a click), it is replaced.
    const confirmed = await trade(await token("evil", ["read"]), { [REPLACE_SESSION_HEADER]: "true" });
    expect(confirmed.status).toBe(204);
    const theirs = confirmed.headers.get("set-cookie")!.split(";")[0]!;
    expect((await page(PAGE, theirs)).status).toBe(403);
    // A session that expired is no session to protect.
    const expired = await verifier.mintSession({ tenant: TENANT, roles: ["read"] }, -1);
    const afterExpiry = await app.request("/ui/session", {
      method: "POST",
      headers: {
        authorization: `Bearer ${await token("evil", ["read"])}`,
        cookie: `${SESSION_COOKIE}=${expired}`,
      },
    });
    expect(afterExpiry.status).toBe(204);
  });

  it("a session keeps its token's project limit; a token limited to processes opens no session", async () => {
    const limited = await mintToken(SECRET, { tenant: TENANT, roles: ["read"], project: PROJECT }, 600);
    const cookie = await session(limited);
    expect((await page(PAGE, cookie)).status).toBe(200);
    const other = await page(`/ui/tenants/${TENANT}/projects/other`, cookie);
    expect(other.status).toBe(403);
    expect(other.html).toContain("the token is limited to project &#39;web&#39;, not &#39;other&#39;");
    const engine = await mintToken(SECRET, { tenant: TENANT, roles: ["read"], reach: "processes" }, 600);
    const refused = await app.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${engine}` },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(refused.headers.get("set-cookie")).toBeNull();
  });

  it("a page answers 401 for a bearer token given as the cookie: only the listing's own sessions open pages", async () => {
    const bearer = await token(TENANT, ["read"]);
    const { status, html } = await page(PAGE, `${SESSION_COOKIE}=${bearer}`);
    expect(status).toBe(401);
    expect(html).toContain("the token is not a web listing session");
  });

  it("a bad id answers 400 invalid_id before the session is looked at, as the API does", async () => {
    expect((await page("/ui/tenants/ACME/projects/web")).status).toBe(400);
  });
});

describe("the listing's pages", () => {
  let cookie: string;
  beforeAll(async () => {
    cookie = await session(await token(TENANT, ["read"]));
  });

  it("serve no inline script or style, under a CSP that forbids them, and are not cached", async () => {
    const { headers, html } = await page(PAGE, cookie);
    expect(headers.get("content-security-policy")).toBe(UI_CSP);
    expect(UI_CSP).toContain("script-src 'self'");
    expect(headers.get("cache-control")).toBe("no-store");
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    const script = await app.request("/ui/assets/ui.js");
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("list the merged tools with layer, type, labels, surface, enabled and pack groups with sub-tool counts", async () => {
    const { status, html } = await page(PAGE, cookie);
    expect(status).toBe(200);
    const row = (name: string) =>
      new RegExp(`<tr[^>]*><th scope="row"><a href="${PAGE}/tools/${name}">${name}</a></th>(.*?)</tr>`).exec(
        html,
      )?.[1] ?? "";
    expect(row("greeting")).toContain("layer-project");
    expect(row("greeting")).toContain(">demo<");
    expect(row("doc_getting_started")).toContain("layer-bundled");
    expect(row("tool_list")).toContain("layer-builtin");
    expect(row("bulk_00")).toContain("primary");
    expect(row("handbook")).toContain("deferred");
    expect(row("doc_tools_overview")).toContain("disabled");
    expect(html).toContain("Pack pets — 3 sub-tools");
    expect(row("pets__list_pets")).toContain("layer-project");
    // Labels filter the listing.
    const filtered = await page(`${PAGE}?label=bulk`, cookie);
    expect(filtered.html).toContain(`${PRIMARY_TOOLS.length} tools`);
    expect(filtered.html).not.toContain(">handbook<");
  });

  it("show usage per role once a process has called a tool", async () => {
    const reader = {
      authorization: `Bearer ${await token(TENANT, ["read"])}`,
      "content-type": "application/json",
    };
    const spawned = await app.request(`${T}/processes`, {
      method: "POST",
      headers: reader,
      body: JSON.stringify({ recipe: "writer", engineDefault: ["handbook"], models: [] }),
    });
    const { processId } = await spawned.json();
    const call = await app.request(`${T}/processes/${processId}/invoke`, {
      method: "POST",
      headers: reader,
      body: JSON.stringify({ name: "handbook", params: {} }),
    });
    expect(call.status).toBe(200);
    const { html } = await page(PAGE, cookie);
    expect(html).toContain("writer: 1 call");
  });

  it("show one tool: normalised document, input schema, the layers it exists in, which wins, raw YAML", async () => {
    const { status, html } = await page(`${PAGE}/tools/greeting`, cookie);
    expect(status).toBe(200);
    expect(html).toContain("Normalised document");
    expect(html).toContain("Input schema");
    expect(html).toMatch(/layer-project">project<\/span><\/th><td><code>[^<]+<\/code><\/td><td>wins/);
    expect(html).toMatch(/layer-tenant">tenant<\/span><\/th><td><code>[^<]+<\/code><\/td><td>shadowed/);
    expect(html).toContain("description: Greets, as the tenant wrote it");
    // When its document was written (the seeding token has no subject, so no author).
    expect(html).toMatch(/<dt>Updated<\/dt><dd>\d{4}-\d\d-\d\dT[^<]+\(created \d{4}-/);
    const subTool = await page(`${PAGE}/tools/pets__get_pet_by_id`, cookie);
    expect(subTool.html).toContain("server-tools/pets.yaml");
    expect((await page(`${PAGE}/tools/tool_list`, cookie)).html).toContain(
      "A built-in tool of the capability floor",
    );
    expect((await page(`${PAGE}/tools/whoami`, cookie)).html).toContain(
      "a tenant or project document of this name would replace or disable it",
    );
    const disabled = await page(`${PAGE}/tools/doc_tools_overview`, cookie);
    expect(disabled.status).toBe(200);
    expect(disabled.html).toContain("Disabled by the document of the");
    const missing = await page(`${PAGE}/tools/no_such_tool`, cookie);
    expect(missing.status).toBe(404);
    expect(missing.html).toContain("tool_not_found");
  });

  it("show what the model sees for a chain — budget, wire, deferred, demoted, discovery blocks — and store no process", async () => {
    const reader = {
      authorization: `Bearer ${await token(TENANT, ["read"])}`,
      "content-type": "application/json",
    };
    const learned = await app.request("/v1/models/observed-limits", {
      method: "POST",
      headers: reader,
      body: JSON.stringify({
        model: "openai/gpt-4.1",
        error:
          "Invalid 'tools': array too long. Expected an array with maximum length 8, but got an array with length 14 instead.",
      }),
    });
    expect(learned.status, await learned.clone().text()).toBe(200);
    const spawn = vi.spyOn(state, "createProcess");
    const { status, html } = await page(`${PAGE}/model?models=openai/gpt-4.1`, cookie);
    expect(status).toBe(200);
    expect(spawn).not.toHaveBeenCalled();
    expect(html).toMatch(/<dt>maxTools<\/dt><dd>8<\/dd>/);
    expect(html).toMatch(/<dt>Limit<\/dt><dd>7<\/dd>/);
    expect(html).toMatch(/Demoted by the budget \((\d+)\)/);
    expect(Number(/Demoted by the budget \((\d+)\)/.exec(html)![1])).toBeGreaterThan(0);
    expect(html).toContain("## Tools moved out of your tools array this turn");
    expect(html).toContain("bulk_00");
    const bad = await page(`${PAGE}/model?models=not-a-model`, cookie);
    expect(bad.status).toBe(422);
    expect(bad.html).toContain("validation_failed");
  });
});

describe("a tool page says what the tool runs", () => {
  it("names the MCP server's tool of an mcp_server sub-tool and of an mcp tool (server-everything)", async () => {
    const { app: mcpApp } = await testApp({ env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
    const writer = await token(TENANT, ["read", "write"]);
    const put = async (path: string, body: string) => {
      const res = await mcpApp.request(`${T}/${path}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${writer}`, "content-type": "application/yaml" },
        body,
      });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
    };
    await put(
      "documents/mcp-servers/everything.yaml",
      `url: ${inject("mcpEverythingUrl")}\ntimeoutMs: 10000\n`,
    );
    await put(
      "tools/ev",
      "type: mcp_server\ndescription: The reference server\nparameters:\n  server: everything\n",
    );
    await put(
      "tools/ev_sum",
      "type: mcp\ndescription: Adds two numbers\nparameters:\n  server: everything\n  toolName: get-sum\n",
    );
    await packsCurrent(mcpApp, PROJECT);
    const res = await mcpApp.request("/ui/session", {
      method: "POST",
      headers: { authorization: `Bearer ${await token(TENANT, ["read"])}` },
    });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    for (const name of ["ev__get_sum", "ev_sum"]) {
      const html = await (await mcpApp.request(`${PAGE}/tools/${name}`, { headers: { cookie } })).text();
      expect(html).toContain(
        "<dt>Runs</dt><dd><span>MCP tool <code>get-sum</code> of the server <code>everything</code>",
      );
    }
  });
});
