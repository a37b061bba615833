import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Resource } from "sst/resource";
import { type Config, loadConfig } from "./api/config";
import { LINKED, type LinkedName } from "./linked";

/** Settings as `ConfigSchema` reads them: strings by variable name. */
export type SettingValues = Partial<Record<keyof Config, string>>;

/**
 * The files a function bundle reads from disk, by the setting that points at each; `npm run build`
 * (scripts/build.ts) copies them beside the bundle's entry under these names.
 */
export const BUNDLE_FILES = {
  VANCE_SCRIPT_WORKER: "script-worker.mjs",
  VANCE_PARSE_WORKER: "parse-worker.mjs",
  VANCE_SCRIPT_WASM: "quickjs.wasm",
  VANCE_DEFAULTS_DIR: "defaults",
} as const satisfies SettingValues;

/**
 * Settings pointing at the files beside a bundle's entry (`import.meta.url` of the entry); throws
 * naming those missing, so a bundle without them fails at its start rather than at first use.
 */
export function bundledFiles(entryUrl: string, names: readonly (keyof typeof BUNDLE_FILES)[]): SettingValues {
  const files = names.map((name) => [name, fileURLToPath(new URL(BUNDLE_FILES[name], entryUrl))] as const);
  const missing = files.filter(([, file]) => !existsSync(file)).map(([name]) => BUNDLE_FILES[name]);
  if (missing.length > 0) {
    throw new Error(`the bundle lacks ${missing.join(", ")} beside its entry (npm run build copies them)`);
  }
  return Object.fromEntries(files);
}

/**
 * What the linked resources (SST's `Resource`: buckets, table, secrets) supply, by setting. A
 * resource that is not linked supplies nothing; outside Lambda none is.
 */
export function linkedSettings(resource: object = Resource): SettingValues {
  const settings: SettingValues = {};
  for (const [name, { property, setting }] of Object.entries(LINKED) as [
    LinkedName,
    (typeof LINKED)[LinkedName],
  ][]) {
    // `in` first: reading a name that is not linked makes `Resource` throw.
    if (!(name in resource)) continue;
    const value: unknown = (Reflect.get(resource, name) as Record<string, unknown> | undefined)?.[property];
    if (typeof value === "string" && value !== "") settings[setting] = value;
  }
  return settings;
}

/**
 * The one place a function reads its settings: the entry's `defaults`, then the linked resources,
 * then environment variables, each overriding the one before. A set variable always wins
 * (DESIGN §7: `VANCE_JWT_SECRET` over the `JwtSecret` secret), so locally, where nothing is
 * linked, the environment is the whole configuration. Validation is `loadConfig`'s.
 */
export function readSettings(
  options: {
    readonly defaults?: SettingValues;
    readonly env?: Record<string, string | undefined>;
    readonly resource?: object;
  } = {},
): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(options.env ?? process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "",
    ),
  );
  return { ...options.defaults, ...linkedSettings(options.resource), ...env };
}

/**
 * A function's configuration at its start: `readSettings` validated by `loadConfig`. A failure
 * names every bad or missing setting, and for a setting a linked resource supplies, that
 * resource too, since in Lambda that is what is missing.
 */
export function loadFunctionConfig(options: {
  readonly defaults?: SettingValues;
  readonly require?: readonly (keyof Config)[];
  readonly env?: Record<string, string | undefined>;
  readonly resource?: object;
}): Config {
  try {
    return loadConfig(readSettings(options), { require: options.require ?? [] });
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    let message = error.message;
    for (const [name, { setting }] of Object.entries(LINKED)) {
      message = message.replaceAll(`- ${setting}:`, `- ${setting} (linked resource ${name}):`);
    }
    throw new Error(message);
  }
}
