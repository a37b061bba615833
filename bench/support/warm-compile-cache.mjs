// Warms V8's compile cache for a built bundle (bench/cold-start.ts): run with NODE_COMPILE_CACHE
// set, it imports the bundle (argv[2]), hands its handler one event (argv[3], JSON) and exits
// normally, which is when Node writes the cache (a killed Lambda host would write none).
import { flushCompileCache } from "node:module";
import { pathToFileURL } from "node:url";

const { handler } = await import(pathToFileURL(process.argv[2]).href);
await handler(JSON.parse(process.argv[3]), { getRemainingTimeInMillis: () => 30_000, awsRequestId: "warm" });
flushCompileCache?.();
process.exit(0);
