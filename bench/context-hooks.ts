/**
 * Microbenchmark: what a context manager's hooks cost a chain of 50 awaits, on the Node that
 * runs it — none, `AsyncLocalStorageContextManager`, and the promise-hook manager
 * (`functions/api/promise-context.ts`). CPU µs per chain, the median of 15 batches of 2,000.
 *
 * Run: `npx tsx bench/context-hooks.ts`; on Node 22 with and without
 * `--experimental-async-context-frame`: `node [flag] --import tsx bench/context-hooks.ts`.
 */
import { type ContextManager, context, createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { PromiseContextManager } from "../functions/api/promise-context";
import { median, runIfMain } from "./support/report";

const KEY = createContextKey("bench");

async function leaf(i: number): Promise<number> {
  await null;
  return i;
}

async function chain(depth: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < depth; i++) sum += await leaf(i);
  return sum;
}

async function measure(manager: ContextManager | undefined): Promise<number> {
  if (manager) context.setGlobalContextManager(manager.enable());
  const run = () => context.with(ROOT_CONTEXT.setValue(KEY, 1), () => chain(50));
  for (let i = 0; i < 2000; i++) await run();
  const batches: number[] = [];
  for (let batch = 0; batch < 15; batch++) {
    const before = process.cpuUsage();
    for (let i = 0; i < 2000; i++) await run();
    const used = process.cpuUsage(before);
    batches.push((used.user + used.system) / 2000);
  }
  if (manager) context.disable();
  return median(batches);
}

export async function main(): Promise<void> {
  const flags = process.execArgv.filter((flag) => flag.includes("async-context-frame")).join(" ");
  const none = await measure(undefined);
  const als = await measure(new AsyncLocalStorageContextManager());
  const hooks = await measure(new PromiseContextManager());
  console.log(
    `context-hooks: Node ${process.version}${flags ? ` ${flags}` : ""}, µs per 50-await chain: ` +
      `none ${none.toFixed(2)}, AsyncLocalStorage ${als.toFixed(2)} (+${(als - none).toFixed(2)}), ` +
      `promise hooks ${hooks.toFixed(2)} (+${(hooks - none).toFixed(2)})`,
  );
}

runIfMain(import.meta.url, main);
