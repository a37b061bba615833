import type { TestProject } from "vitest/node";
import buildCli from "./cli";
import startDynamo from "./dynamodb";
import startMcpServers from "./mcp-servers";
import startS3rver from "./s3rver";
import buildWorkers from "./script-worker";

type Teardown = () => void | Promise<void>;

/**
 * The integration project's global setup: the worker bundles, the CLI bundle, s3rver, DynamoDB
 * Local and the MCP servers are independent, so they build and start side by side (vitest runs
 * the files of a `globalSetup` list one after another). The teardowns run side by side too.
 * Should one step fail, the servers the others started are stopped before the error is thrown.
 */
export default async function setup(project: TestProject): Promise<Teardown> {
  const steps: Promise<Teardown | undefined>[] = [
    buildWorkers(),
    buildCli().then(() => undefined),
    startS3rver(project),
    startDynamo(project),
    startMcpServers(project),
  ];
  const settled = await Promise.allSettled(steps);
  const teardowns = settled.flatMap((step) =>
    step.status === "fulfilled" && step.value ? [step.value] : [],
  );
  const teardown = async (): Promise<void> => {
    await Promise.all(teardowns.map((stop) => stop()));
  };
  const failed = settled.find((step) => step.status === "rejected");
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  return teardown;
}
