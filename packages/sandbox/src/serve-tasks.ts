import { parentPort } from "node:worker_threads";
import type { TaskMessage, TaskOutcome, TaskWorkerMessage } from "./task-pool";
import { workerPriority } from "./worker-priority";

/** A task's work in the worker: its input in, a plain value out (structured clone carries both). */
export type TaskHandler = (input: never) => unknown;

/**
 * The body of a task worker (the entry a `TaskPool`'s `workerUrl` names): answers each task with
 * its handler's value, or its thrown message as `TaskError`. One task at a time; the pool ends a
 * task that overstays its deadline by terminating this thread.
 */
export function serveTasks(handlers: Readonly<Record<string, TaskHandler>>): void {
  const port = parentPort;
  if (!port) throw new Error("serveTasks runs in a worker thread");
  const post = (message: TaskWorkerMessage) => port.postMessage(message);
  port.on("message", async ({ task, input }: TaskMessage) => {
    const handler = Object.hasOwn(handlers, task) ? handlers[task] : undefined;
    let outcome: TaskOutcome;
    if (!handler) {
      outcome = { ok: false, error: "TaskError", message: `no task named '${task}'` };
    } else {
      try {
        outcome = { ok: true, value: await handler(input as never) };
      } catch (error) {
        outcome = {
          ok: false,
          error: "TaskError",
          message: error instanceof Error ? error.message : String(error),
        };
      }
    }
    post({ kind: "done", outcome });
  });
  // Lowered when the entry imported worker-priority.ts first (or this module, at the latest).
  post({ kind: "ready", priority: workerPriority });
}
