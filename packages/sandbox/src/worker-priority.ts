/**
 * Imported first by each worker thread's entry (script-thread.ts, the API's parse-worker.ts): the
 * thread lowers its CPU priority (`workerData.nice` levels, see thread-priority.ts) before the rest
 * of its bundle is evaluated — QuickJS's glue, Ajv, the OpenAPI compiler: tens of milliseconds of
 * CPU on every fresh thread, which would otherwise compete with the serving thread as an equal.
 */
import { workerData } from "node:worker_threads";
import { lowerThreadPriority, type ThreadPriority } from "./thread-priority";

/** The priority this thread runs at, reported to its pool when the thread is ready. */
export const workerPriority: ThreadPriority = lowerThreadPriority(
  (workerData as { readonly nice?: number } | undefined)?.nice ?? 0,
);
