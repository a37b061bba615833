/**
 * The search bench's latency floor: MiniSearch 7.2.0 (BM25+, default options) over the same tools
 * as the service, served over HTTP from a process of its own, so that the bench's one client
 * times both the same way (`bench/search.ts`). Not a bench by itself.
 *
 * Run: `tsx bench/search-peer.ts TOOLS.json` — TOOLS.json holds `[{ name, description }]`; it
 * prints `listening on PORT`, then answers `POST /` `{ "query": "…" }` with the best 5 names.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import MiniSearch from "minisearch";

const RESULTS = 5;

/** The peer's index: names split at `_`, and descriptions, as `GET T/tools` lists them. */
export function peerIndex(
  tools: readonly { name: string; description: string }[],
): (query: string) => string[] {
  const index = new MiniSearch<{ id: string; words: string; description: string }>({
    fields: ["words", "description"],
  });
  index.addAll(
    tools.map((tool) => ({
      id: tool.name,
      words: tool.name.split("_").join(" "),
      description: tool.description,
    })),
  );
  return (query) =>
    index
      .search(query)
      .slice(0, RESULTS)
      .map((hit) => String(hit.id));
}

function serve(file: string): void {
  const search = peerIndex(JSON.parse(readFileSync(file, "utf8")) as { name: string; description: string }[]);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const { query } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { query: string };
      const body = JSON.stringify({ names: search(query) });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    console.log(`listening on ${address.port}`);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) serve(process.argv[2]!);
