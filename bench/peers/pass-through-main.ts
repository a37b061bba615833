/**
 * The bare `node:http` pass-through proxy of `peers.ts` as a process of its own (bench/mcp.ts forks
 * it, so no client or other server shares its CPU): forwards to the URL of its one argument and
 * sends the parent `{ url }` once it listens; it runs until the parent kills it.
 */
import { startPassThroughProxy } from "./peers";

const target = process.argv[2];
if (!target) throw new Error("usage: pass-through-main.ts <target url>");
const proxy = await startPassThroughProxy(target);
process.send?.({ url: proxy.url });
// A normal exit on the parent's SIGTERM, so that `--cpu-prof` (MCP_BENCH_PROFILE) writes its profile.
process.once("SIGTERM", () => process.exit(0));
