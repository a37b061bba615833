import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import sparticuz from "@sparticuz/chromium";
import { type Browser, chromium } from "playwright-core";
import { CACHE, moveIntoPlace } from "./npm-on-demand";

/** The package's version names the cache folder, so an upgrade unpacks its own browser. */
const VERSION = (
  JSON.parse(
    readFileSync(join(process.cwd(), "node_modules", "@sparticuz", "chromium", "package.json"), "utf8"),
  ) as {
    version: string;
  }
).version;

/**
 * Flags of `@sparticuz/chromium` left out. Three loosen the page's own security model
 * (same-origin, mixed content, site isolation), which the listing's tests exercise (sessions, a
 * login-CSRF prompt). `--single-process`, which Lambda's sandboxing needs, makes closing one
 * context end the whole browser, and every test opens and closes its own.
 */
const LEFT_OUT = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  "--disable-site-isolation-trials",
  "--single-process",
]);

/**
 * The Chromium that `@sparticuz/chromium` (a devDependency) carries brotli-packed, unpacked once
 * into `node_modules/.cache/chromium-<version>/`. The package itself unpacks into `os.tmpdir()`
 * and reuses any `chromium` file it finds there, even a half-written one from a run that died or
 * runs beside this one; so it unpacks into a staging folder of this process (`TMPDIR` pointed
 * at it while it does), which is then renamed into place whole.
 */
export async function chromiumExecutable(): Promise<string> {
  const prefix = join(CACHE, `chromium-${VERSION}`);
  const binary = join(prefix, "chromium");
  if (existsSync(binary)) return binary;
  const staging = `${prefix}.${process.pid}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const tmpdir = process.env.TMPDIR;
  try {
    process.env.TMPDIR = staging;
    const unpacked = await sparticuz.executablePath();
    if (unpacked !== join(staging, "chromium")) {
      throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, not into ${staging}`);
    }
    moveIntoPlace(staging, prefix, binary);
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** Headless Chromium from npm, driven by playwright-core: no system browser needed. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumExecutable(),
    args: [...sparticuz.args.filter((flag) => !LEFT_OUT.has(flag)), "--disable-background-networking"],
    headless: true,
  });
}
