import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { listen, PRIMARY_TOOLS, PROJECT, seedProject, TENANT, token } from "./support/ui-project";

/** Debian's `chromium` package; `.ci/run` installs it. Missing, the suite fails: it never skips. */
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(process.cwd(), "test", "artifacts");
const PAGE = `/ui/tenants/${TENANT}/projects/${PROJECT}`;

let browser: Browser;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`,
    );
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  const { app } = await testApp();
  await seedProject(app);
  server = await listen(app);
  // The tenant's engine learned a limit of 8 tools for openai: the ten primary tools cannot all fit.
  const learned = await fetch(`${server.base}/v1/models/observed-limits`, {
    method: "POST",
    headers: { authorization: `Bearer ${await token(TENANT, ["read"])}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "openai/gpt-4.1",
      error:
        "Invalid 'tools': array too long. Expected an array with maximum length 8, but got an array with length 14 instead.",
    }),
  });
  expect(learned.status).toBe(200);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh tab with its own session storage and cookies. */
async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  return context.newPage();
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, name), fullPage });
}

describe("the web listing in headless Chromium", () => {
  it("opens with a token in the fragment, lists the project's tools with layers and labels, opens a tool, shows demoted tools", async () => {
    const page = await newPage();
    const reader = await token(TENANT, ["read"]);
    await page.goto(`${server.base}${PAGE}#token=${reader}`);
    // The script trades the token for a session and reloads: the table appears.
    const table = page.getByRole("table");
    await table.waitFor();
    expect(page.url()).toBe(`${server.base}${PAGE}`);
    expect(await page.evaluate(() => sessionStorage.getItem("vance-ui-token"))).toBe(reader);
    await expect.poll(() => page.locator("#session-status").textContent()).toContain("tenant acme");

    const row = (name: string) =>
      page.getByRole("row").filter({ has: page.getByRole("rowheader", { name, exact: true }) });
    // Cells after the name: layer, type, labels, surface, enabled, usage.
    const cells = (name: string) => row(name).getByRole("cell").allTextContents();
    expect(await cells("greeting")).toEqual(["project", "doc_lookup", "demoweb", "deferred", "yes", "—"]);
    expect((await cells("doc_getting_started"))[0]).toBe("bundled");
    expect((await cells("tool_list"))[0]).toBe("builtin");
    expect((await cells("bulk_00")).slice(2, 4)).toEqual(["bulk", "primary"]);
    expect((await cells("doc_tools_overview"))[4]).toBe("disabled");
    expect((await cells("pets__create_pet"))[0]).toBe("project");
    expect(await page.getByText("Pack pets — 3 sub-tools").count()).toBe(1);
    await shot(page, "ui-project.png");

    // An expired session renews itself from the tab's session storage, without the token in a URL.
    await page.context().clearCookies();
    await page.reload();
    await page.getByRole("table").waitFor();
    expect(page.url()).toBe(`${server.base}${PAGE}`);

    await page.getByRole("link", { name: "greeting", exact: true }).click();
    await page.getByRole("heading", { name: "Layers" }).waitFor();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("greeting");
    const layers = page.getByRole("table");
    expect(await layers.getByRole("row").filter({ hasText: "wins" }).getByText("project").count()).toBe(1);
    expect(await layers.getByRole("row").filter({ hasText: "shadowed" }).getByText("tenant").count()).toBe(1);
    expect(await page.getByText("description: Greets, as this project wrote it").isVisible()).toBe(true);
    await shot(page, "ui-tool.png");

    await page.getByRole("link", { name: "What the model sees" }).click();
    await page.getByLabel("Model chain").fill("openai/gpt-4.1");
    await page.getByRole("button", { name: "Show" }).click();
    await page.getByRole("heading", { name: /Demoted by the budget/ }).waitFor();
    const demoted = await page
      .getByRole("list", { name: "Demoted tools" })
      .getByRole("listitem")
      .allTextContents();
    expect(demoted.length).toBeGreaterThan(0);
    expect(demoted.filter((name) => PRIMARY_TOOLS.includes(name)).length).toBeGreaterThan(0);
    expect(await page.locator("dl.facts").textContent()).toContain("Limit7");
    await shot(page, "ui-model.png");
    await page.context().close();
  }, 60_000);

  it("asks before a #token= link for another tenant replaces the open session (login CSRF), and does only what the user chose", async () => {
    const page = await newPage();
    const mine = await token(TENANT, ["read"]);
    await page.goto(`${server.base}${PAGE}#token=${mine}`);
    await page.getByRole("table").waitFor();
    // Someone else's link, opened in the same tab.
    await page.goto(`${server.base}/ui/#token=${await token("evil", ["read"])}`);
    const stay = page.getByRole("button", { name: `Stay with tenant ${TENANT}` });
    await stay.waitFor();
    expect(await page.locator("#session-status").textContent()).toContain(
      `the listing is signed in for tenant '${TENANT}'; this token is for tenant 'evil'`,
    );
    await shot(page, "ui-session-conflict.png", false);
    await stay.click();
    await expect
      .poll(() => page.locator("#session-status").textContent())
      .toContain("the link's token was dropped");
    expect(await page.evaluate(() => sessionStorage.getItem("vance-ui-token"))).toBe(mine);
    await page.goto(`${server.base}${PAGE}`);
    await page.getByRole("table").waitFor();
    await expect.poll(() => page.locator("#session-status").textContent()).toContain(`tenant ${TENANT}`);
    // Asked again, the user switches: the session is the other tenant's now.
    await page.goto(`${server.base}/ui/#token=${await token("evil", ["read"])}`);
    await page.getByRole("button", { name: "Switch to tenant evil" }).click();
    await expect.poll(() => page.locator("#session-status").textContent()).toContain("tenant evil");
    await page.context().close();
  }, 60_000);

  it("is readable on a phone: one card per tool, nothing wider than the screen", async () => {
    const page = await newPage({ width: 390, height: 844 });
    await page.goto(`${server.base}${PAGE}#token=${await token(TENANT, ["read"])}`);
    await page.getByRole("table").waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // Each cell names its column where the header row is out of sight.
    const layer = page.getByRole("cell").filter({ hasText: "project" }).first();
    expect(await layer.evaluate((cell) => getComputedStyle(cell, "::before").content)).toBe('"Layer: "');
    expect(await page.getByRole("main").count()).toBe(1);
    expect(await page.getByRole("navigation", { name: "Breadcrumb" }).count()).toBe(1);
    await shot(page, "ui-phone.png", false);
    await page.context().close();
  }, 60_000);

  it("another tenant's token sees 403 forbidden", async () => {
    const page = await newPage();
    const statuses: number[] = [];
    page.on("response", (response) => {
      if (response.url() === `${server.base}${PAGE}`) statuses.push(response.status());
    });
    await page.goto(`${server.base}${PAGE}#token=${await token("globex", ["read"])}`);
    await page.getByRole("heading", { name: "Not allowed" }).waitFor();
    expect(statuses.at(-1)).toBe(403);
    expect(await page.getByRole("alert").textContent()).toContain("403 forbidden");
    expect(await page.getByRole("table").count()).toBe(0);
    await shot(page, "ui-forbidden.png");
    await page.context().close();
  }, 60_000);
});
