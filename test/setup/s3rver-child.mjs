/**
 * Runs s3rver in its own process, because ListObjectsV2 pagination needs `--openssl-legacy-provider`
 * (see DESIGN.md §5). Usage: `node --openssl-legacy-provider s3rver-child.mjs <directory> [port] [--keep]`
 * (a free port unless given or 0; a test that restarts the server passes the port it had).
 * Prints one JSON line `{"port":N}` on stdout once listening; on SIGTERM/SIGINT, or when stdin
 * closes because the parent died, it stops and removes the directory — unless `--keep` (the
 * local AWS stack, `npm run start:aws-local`, keeps its objects across restarts).
 */
import { rm } from "node:fs/promises";
import S3rver from "s3rver";

const directory = process.argv[2];
const keep = process.argv.includes("--keep");
if (!directory) {
  process.stderr.write("usage: s3rver-child.mjs <directory> [port] [--keep]\n");
  process.exit(2);
}

const server = new S3rver({
  address: "127.0.0.1",
  port: Number(process.argv[3] === "--keep" ? 0 : (process.argv[3] ?? 0)),
  silent: true,
  directory,
  configureBuckets: [{ name: "vance-test" }],
});

const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  await server.close().catch(() => {});
  // The parent removes it too, but not when it was killed: then only we know the directory.
  if (!keep) await rm(directory, { recursive: true, force: true }).catch(() => {});
  process.exit(0);
}

process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
process.stdin.on("end", shutdown);
process.stdin.on("error", shutdown);
process.stdin.resume();
