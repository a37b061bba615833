/**
 * The lean gateway of `peers.ts` as a process of its own (bench/mcp.ts forks it, so no client or
 * other server shares its CPU): answers the calls it forwards to the URL of its one argument and
 * sends the parent `{ url }` once it listens; it runs until the parent kills it.
 */
import { startLeanGateway } from "./peers";

const target = process.argv[2];
if (!target) throw new Error("usage: lean-gateway-main.ts <target url>");
const gateway = await startLeanGateway(target);
process.send?.({ url: gateway.url });
// A normal exit on the parent's SIGTERM, so that `--cpu-prof` (MCP_BENCH_PROFILE) writes its profile.
process.once("SIGTERM", () => process.exit(0));
