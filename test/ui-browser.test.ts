import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { launchChromium } from "./support/chromium";
import {
  BIG_PACK_SIZE,
  LONG_PROJECT,
  listen,
  PRIMARY_TOOLS,
  PROJECT,
  packsCurrent,
  seedLongProject,
  seedProject,
  TENANT,
  token,
} from "./support/ui-project";

const ARTIFACTS = join(process.cwd(), "test", "artifacts");
const PAGE = `/ui/tenants/${TENANT}/projects/${PROJECT}`;

let browser: Browser;
let server: Awaited<ReturnType<typeof listen>>;
let app: Awaited<ReturnType<typeof testApp>>["app"];

beforeAll(async () => {
  // First: unpacking the browser points TMPDIR elsewhere for a moment (test/support/chromium.ts).
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
  ({ app } = await testApp());
  await seedProject(app);
  await seedLongProject(app);
  await packsCurrent(app, PROJECT);
  await packsCurrent(app, LONG_PROJECT);
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
});

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
    // The empty field shows an example that cannot be mistaken for a chain already filled in.
    const chain = page.getByLabel("Model chain");
    expect(await chain.inputValue()).toBe("");
    expect(await chain.getAttribute("placeholder")).toMatch(/^e\.g\. /);
    await chain.fill("openai/gpt-4.1");
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
  });

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
  });

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
  });

  it("the filter splits what is typed at spaces only: 'greeting demo' finds greeting, 's' alone filters", async () => {
    const page = await newPage();
    await page.goto(`${server.base}${PAGE}#token=${await token(TENANT, ["read"])}`);
    await page.locator("#tools").waitFor();
    const shown = () => page.locator("#tools tr[data-search]:visible th").allTextContents();
    const count = () => page.locator("#tool-filter-count").textContent();
    // Two words, the second a label of greeting.
    await page.getByLabel("Filter").fill("greeting demo");
    await expect.poll(count).toMatch(/^1 of \d+ tools match$/);
    expect(await shown()).toEqual(["greeting"]);
    // A name holding the letter s is one word, not split at each s.
    await page.getByLabel("Filter").fill("doc_tools_overview");
    await expect.poll(count).toMatch(/^1 of \d+ tools match$/);
    expect(await shown()).toEqual(["doc_tools_overview"]);
    await page.getByLabel("Filter").fill("s");
    await expect.poll(count).toMatch(/^\d+ of \d+ tools match$/);
    await page.context().close();
  });

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
  });
});

/** The two widths every listing page must read well at: a laptop and a phone. */
const WIDTHS = [
  { name: "1280", viewport: { width: 1280, height: 900 } },
  { name: "390", viewport: { width: 390, height: 844 } },
] as const;

const LONG = `/ui/tenants/${TENANT}/projects/${LONG_PROJECT}`;

/** A tab signed in with `bearer` (through the fragment, as npm start's link does), showing `path`. */
async function signedIn(viewport: { width: number; height: number }, path: string, bearer?: string) {
  const page = await newPage(viewport);
  await page.goto(`${server.base}${path}#token=${bearer ?? (await token(TENANT, ["read"]))}`);
  await page.locator("#sign-out").waitFor();
  return page;
}

/**
 * Every element whose box reaches past the viewport's right edge (or starts left of it), outside
 * the scroll containers that are meant to scroll; and the page's own horizontal overflow.
 */
async function overflowing(page: Page): Promise<{ page: number; elements: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const elements = [...document.querySelectorAll("body *")]
      .filter((element) => {
        const box = element.getBoundingClientRect();
        if (box.width === 0 || box.height === 0) return false;
        // Wholly left of the page is the skip link's resting place until it is focused.
        return box.right > width + 0.5 || (box.left < -0.5 && box.right > 0);
      })
      .map(
        (element) =>
          `${element.tagName.toLowerCase()}.${element.className}: ${element.textContent?.slice(0, 40)}`,
      );
    return { page: document.documentElement.scrollWidth - width, elements };
  });
}

describe("the first hour in the listing (issue 28), at 1,280 px and 390 px", () => {
  for (const { name, viewport } of WIDTHS) {
    it(`a project with 64-character names and a ${BIG_PACK_SIZE}-operation pack: nothing overflows, the pack is collapsed, the filter finds one sub-tool (${name} px)`, async () => {
      const page = await signedIn(viewport, LONG);
      await page.locator("#tools").waitFor();
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      const pack = page.locator("details#pack-big");
      expect(await pack.evaluate((details) => (details as HTMLDetailsElement).open)).toBe(false);
      // Collapsed, the page holds the plain tools and the pack's one line, not its sub-tools.
      expect(await page.locator("#tools tr[data-search]:visible").count()).toBeLessThan(60);
      await shot(page, `ui-long-project-${name}.png`);

      await page.getByLabel("Filter").fill("op_123");
      await expect.poll(() => pack.evaluate((details) => (details as HTMLDetailsElement).open)).toBe(true);
      expect(await pack.locator("tr[data-search]:visible").allTextContents()).toEqual([
        expect.stringContaining("big__op_123"),
      ]);
      expect(await page.locator("#tools tbody:not(.pack) tr[data-search]:visible").count()).toBe(0);
      expect(await page.locator("#tool-filter-count").textContent()).toMatch(/^1 of \d+ tools match$/);
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      await page.getByLabel("Filter").fill("");
      await expect
        .poll(() => page.locator("#tools tbody:not(.pack) tr[data-search]:visible").count())
        .toBeGreaterThan(30);
      await page.context().close();
    });

    it(`the model page with 64-character names: deferred names never overlap, nothing scrolls sideways (${name} px)`, async () => {
      const page = await signedIn(viewport, `${LONG}/model?models=openai/gpt-4.1`);
      await page.getByRole("heading", { name: /^Deferred \(/ }).waitFor();
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      const names = page.getByRole("list", { name: "Deferred tools" }).getByRole("listitem");
      expect(await names.count()).toBeGreaterThan(20);
      const boxes = await names.evaluateAll((items) =>
        items.map((item) => {
          const box = item.getBoundingClientRect();
          return {
            left: box.left,
            right: box.right,
            top: box.top,
            bottom: box.bottom,
            fits: item.scrollWidth <= item.clientWidth + 1,
          };
        }),
      );
      expect(boxes.every((box) => box.fits)).toBe(true);
      const overlaps = boxes.filter((a, i) =>
        boxes.some(
          (b, j) =>
            i !== j &&
            a.left < b.right - 1 &&
            b.left < a.right - 1 &&
            a.top < b.bottom - 1 &&
            b.top < a.bottom - 1,
        ),
      );
      expect(overlaps).toEqual([]);
      await shot(page, `ui-long-model-${name}.png`);
      await page.context().close();
    });

    it(`a refused page keeps the viewer and Sign out; Sign out leads to the paste-a-token sign-in (${name} px)`, async () => {
      const page = await signedIn(viewport, "/ui/", await token("globex", ["read"]));
      await page.goto(`${server.base}/ui/tenants/${TENANT}/projects/${PROJECT}`);
      await page.getByRole("heading", { name: "Not allowed" }).waitFor();
      expect(await page.locator("#session-status").textContent()).toBe(
        "Signed in for tenant globex (read only)",
      );
      await page.goto(`${server.base}/ui/tenants/globex/projects/p1/tools/no_such_tool`);
      await page.getByRole("heading", { name: "This page cannot be shown" }).waitFor();
      expect(await page.getByRole("alert").textContent()).toContain("404 tool_not_found");
      expect(await page.locator("#session-status").textContent()).toContain("globex");
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      await shot(page, `ui-not-found-${name}.png`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in to the tool listing" }).waitFor();
      expect(await page.getByLabel("Token").isVisible()).toBe(true);
      await page.context().close();
    });

    it(`signs in with a pasted token, and the picker lists the tenant's projects (${name} px)`, async () => {
      const page = await newPage(viewport);
      await page.goto(`${server.base}/ui/`);
      const reader = await token(TENANT, ["read"]);
      await page.getByLabel("Token").fill(reader);
      await shot(page, `ui-sign-in-${name}.png`);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: `Projects of ${TENANT}` }).waitFor();
      expect(page.url()).toBe(`${server.base}/ui/`);
      const listed = await page
        .getByRole("list", { name: `Projects of ${TENANT}` })
        .getByRole("link")
        .allTextContents();
      expect(listed).toEqual(["The tenant layer (_tenant)", LONG_PROJECT, PROJECT]);
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      await shot(page, `ui-picker-${name}.png`);
      await page.getByRole("link", { name: PROJECT, exact: true }).click();
      await page.locator("#tools").waitFor();
      expect(page.url()).toBe(`${server.base}/ui/tenants/${TENANT}/projects/${PROJECT}`);
      await page.context().close();
    });

    it(`a sub-tool page says which HTTP operation it runs; /docs is in the listing's style and links back (${name} px)`, async () => {
      const page = await signedIn(viewport, `${LONG}/tools/big__op_007`);
      await page.getByRole("heading", { name: "big__op_007" }).waitFor();
      const facts = await page.locator("dl.facts").textContent();
      expect(facts).toContain("RunsGET /items/7 (operation op_007)");
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      await page.getByRole("link", { name: "API reference" }).click();
      await page.getByRole("heading", { name: "Vance Server Tools API" }).waitFor();
      expect(page.url()).toBe(`${server.base}/docs`);
      // The listing's style sheet applies (system font, its header bar), and it links back.
      expect(await page.locator("header.site").evaluate((el) => getComputedStyle(el).display)).toBe("flex");
      expect(await page.getByRole("link", { name: "tool listing" }).getAttribute("href")).toBe("/ui/");
      expect(await overflowing(page)).toEqual({ page: 0, elements: [] });
      await shot(page, `ui-docs-${name}.png`, name === "390");
      await page.context().close();
    });
  }

  it("a platform viewer names the tenant first, then picks among its projects", async () => {
    const page = await signedIn({ width: 1280, height: 900 }, "/ui/", await token("*", ["read"]));
    await page.getByLabel("Tenant").fill(TENANT);
    await page.getByRole("button", { name: "List its projects" }).click();
    await page.getByRole("heading", { name: `Projects of ${TENANT}` }).waitFor();
    expect(page.url()).toBe(`${server.base}/ui/?tenant=${TENANT}`);
    expect(await page.getByRole("link", { name: LONG_PROJECT, exact: true }).count()).toBe(1);
    await page.context().close();
  });
});
