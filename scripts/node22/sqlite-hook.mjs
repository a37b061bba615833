// Registered by scripts/test-node22.ts through NODE_OPTIONS in every process of a Node 22 run:
// `better-sqlite3` resolves to the copy built for Node 22's ABI (the project's own copy is built
// for the Node that ran `npm install`, and a native module loads only under its own ABI).
import { register } from "node:module";

const [from, to] = (process.env.VANCE_SQLITE_NODE22 ?? "").split("\n");
if (from && to) register(new URL("./sqlite-resolve.mjs", import.meta.url), { data: { from, to } });
