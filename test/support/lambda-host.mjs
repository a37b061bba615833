// A stand-in for Lambda's Node.js runtime, run as a child process (test/support/lambda.ts): it
// imports a built function bundle (argv[2]) with the bundle's folder as its working directory,
// as Lambda does (/var/task), and hands it the events its parent sends over IPC, one at a time.
// Plain JavaScript: the child runs no TypeScript loader, as Lambda runs none.
import { basename } from "node:path";
import { pathToFileURL } from "node:url";

const entry = process.argv[2];
const loaded = import(pathToFileURL(entry).href).then((module) => module.handler);
let previous = Promise.resolve();

process.on("message", ({ id, event }) => {
  previous = previous.then(async () => {
    try {
      const handler = await loaded;
      const result = await handler(event, context(id));
      // Time since this process started, and CPU time of all its threads, when the answer is ready.
      const { user, system } = process.cpuUsage();
      process.send({ id, result, processMs: performance.now(), cpuMs: (user + system) / 1000 });
    } catch (error) {
      process.send({ id, error: { name: error?.name ?? "Error", message: error?.message ?? String(error) } });
    }
  });
});

function context(id) {
  const deadline = Date.now() + 30_000;
  return {
    awsRequestId: `request-${id}`,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? basename(entry),
    functionVersion: "$LATEST",
    memoryLimitInMB: "1024",
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}
