// Polls GET /v1/health of the server under test from a process (and session) of its own, so that neither the
// test runner nor the hostile servers it hosts delay a measurement. Every request waits for the
// one before it (a blocked event loop shows as one long request), with a 20 ms pause between.
// stdin: "mark" starts a new window; "report" prints the window's latencies as one JSON line.
import http from "node:http";
import { createInterface } from "node:readline";

const url = new URL("/v1/health", process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let window = [];
let pending = null;

function once() {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.get(url, { agent }, (response) => {
      response.resume();
      response.on("end", () => resolve(performance.now() - started));
    });
    request.on("error", () => resolve(performance.now() - started));
  });
}

async function loop() {
  for (;;) {
    pending = once();
    const ms = await pending;
    window.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

createInterface({ input: process.stdin }).on("line", async (line) => {
  if (line === "mark") {
    // The request in flight may have started before the window.
    await pending;
    window = [];
    process.stdout.write(`${JSON.stringify({ marked: true })}\n`);
  } else if (line === "report") {
    // The request in flight belongs to the window: a block still going on is measured whole.
    if (pending) window.push(await pending);
    const sorted = [...window].sort((a, b) => a - b);
    const median = sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)];
    process.stdout.write(
      `${JSON.stringify({ count: sorted.length, maxMs: sorted.at(-1) ?? 0, medianMs: median })}\n`,
    );
  }
});
process.stdin.on("end", () => process.exit(0));
void loop();
