/**
 * `npm run start:aws-local`: the AWS stack on this machine in one command — s3rver (S3) and
 * DynamoDB Local (from devDependencies), the buckets and the table created, and `INSTANCES`
 * instances of the service (default 3) on consecutive ports from `PORT` (default 8787), each
 * with the environment a Lambda instance gets from its linked resources. Data lives under
 * `$VANCE_DATA_DIR/aws-local` (default `./.data/aws-local`), so a restart keeps it.
 * Ctrl-C stops the instances first (each writes the usage it still holds), then the two servers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { freePort, startDynamoLocal, waitUntilReady } from "../test/setup/dynamodb";
import { prepareAwsLocal, storesEnv } from "../test/support/instances";
import { startS3rver } from "../test/support/s3rver";

const STOP_GRACE_MS = 10_000;

function setting(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    console.error(`${name} must be a whole number ≥ ${min}, got '${raw}'`);
    process.exit(2);
  }
  return value;
}

/** Prefixes each line of a child's output with its instance number. */
function pipeLines(
  stream: NodeJS.ReadableStream | null,
  prefix: string,
  out: { write(line: string): unknown },
): void {
  let rest = "";
  stream?.setEncoding("utf8");
  stream?.on("data", (chunk: string) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) out.write(`${prefix}${line}\n`);
  });
}

async function main(): Promise<void> {
  const instances = setting("INSTANCES", 3, 1);
  const basePort = setting("PORT", 8787, 1);
  const root = resolve(process.env.VANCE_DATA_DIR || ".data", "aws-local");
  const s3Dir = join(root, "s3");
  const dynamoDir = join(root, "dynamodb");
  mkdirSync(s3Dir, { recursive: true });
  mkdirSync(dynamoDir, { recursive: true });

  const dynamoPort = await freePort();
  const dynamoEndpoint = `http://127.0.0.1:${dynamoPort}`;
  const dynamoLocal = startDynamoLocal(dynamoPort, { dbPath: dynamoDir });
  const [s3rver] = await Promise.all([
    startS3rver({ directory: s3Dir }),
    waitUntilReady(dynamoEndpoint, dynamoLocal),
  ]).catch(async (error: unknown) => {
    await dynamoLocal.stop();
    throw error;
  });
  // The names a deployed stage gets from SST; fixed here, so a restart finds its data.
  const stores = await prepareAwsLocal({
    s3Endpoint: s3rver.endpoint,
    dynamoEndpoint,
    documentsBucket: "vance-documents",
    catalogBucket: "vance-catalog",
    table: "vance-state",
  });
  console.log(`s3rver:          ${s3rver.endpoint} (data in ${s3Dir})`);
  console.log(`DynamoDB Local:  ${dynamoEndpoint} (data in ${dynamoDir})`);

  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  const children: ChildProcess[] = [];
  let stopping = false;
  for (let index = 0; index < instances; index++) {
    // The instances share the data dir's jwt-secret and secrets-key (the first start writes them).
    const env = { PORT: String(basePort + index), VANCE_DATA_DIR: root, ...storesEnv(stores) };
    const child = spawn(process.execPath, [tsx, "functions/api/node.ts"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // The first instance's banner (token, curl, listing link) is printed whole; the others say
    // where they listen and any problem.
    pipeLines(child.stdout, `[${index + 1}] `, index === 0 ? process.stdout : new LineFilter(/listening on/));
    pipeLines(child.stderr, `[${index + 1}] `, process.stderr);
    child.once("exit", (code, signal) => {
      if (!stopping) {
        console.error(`[${index + 1}] exited (${signal ?? code}); stopping the stack`);
        void stop(1);
      }
    });
    children.push(child);
    if (index === 0) {
      console.log("\nEach instance's environment (instance 1; the others differ only in PORT):");
      for (const [name, value] of Object.entries(env)) console.log(`  ${name}=${value}`);
      console.log("");
    }
  }

  async function stop(code: number): Promise<void> {
    if (stopping) return;
    stopping = true;
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
            child.once("exit", () => {
              clearTimeout(timer);
              done();
            });
            child.kill("SIGTERM");
          }),
      ),
    );
    await Promise.all([s3rver.stop(), dynamoLocal.stop()]);
    process.exit(code);
  }
  process.once("SIGINT", () => void stop(130));
  process.once("SIGTERM", () => void stop(143));
}

/** A sink that lets through to stdout only the lines matching `pattern`. */
class LineFilter {
  constructor(private readonly pattern: RegExp) {}
  write(line: string): void {
    if (this.pattern.test(line)) process.stdout.write(line);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
