/**
 * A script worker: holds one QuickJS module and runs one script at a time on its own thread.
 * A run whose caller ended stops at its next interrupt check (the shared cancel word) and the
 * thread takes the next run. The main thread ends a run that overstays its deadline or its
 * cancellation by a grace by terminating this thread, so nothing a script does (a catastrophic
 * regex inside QuickJS ignores interrupts) can outlive it.
 */
// First: the thread yields the CPU before the rest of the bundle is evaluated.
import "./worker-priority";
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import {
  type BlockingToolCall,
  cancelledOutcome,
  finishRun,
  type PreparedRun,
  prepareRun,
  runScript,
  timeoutOutcome,
} from "./engine";
import { LOG_LIMITS, LogTail } from "./log-tail";
import { type LoadedModule, loadModule } from "./module";
import {
  ANSWER_SLOT,
  type AnswerMessage,
  CANCEL_SLOT,
  JOBS_SLOT,
  type RunMessage,
  WAITING,
  type WorkerInit,
  type WorkerMessage,
} from "./protocol";
import { workerPriority } from "./worker-priority";

const init = workerData as WorkerInit;
const port = parentPort!;
const flag = new Int32Array(init.signal);
let loaded: LoadedModule = await loadModule(init.quickjs, init.memoryBytes);
let next: PreparedRun = prepareRun(loaded);

function post(message: WorkerMessage): void {
  port.postMessage(message);
}

/** Whether the current run's caller ended (the main thread set the cancel word). */
function cancelled(): boolean {
  return Atomics.load(flag, CANCEL_SLOT) !== 0;
}

/**
 * Posts the call, then sleeps on the shared flag until the main thread answered or the deadline
 * passed. After a `final` refusal (the call budget is spent) every later call of the run gets the
 * same answer here, without crossing to the main thread: a loop that catches it ends at once.
 */
function blockingCall(deadline: number, timeoutMs: number): BlockingToolCall {
  let refusal: AnswerMessage | undefined;
  return (name, params) => {
    if (refusal) return refusal;
    if (cancelled()) {
      // The caller ended: no call leaves a cancelled run; the next interrupt check stops it.
      const { error, message } = cancelledOutcome();
      refusal = { error, message, final: true };
      return refusal;
    }
    while (receiveMessageOnPort(init.answers) !== undefined) {
      // An answer to an earlier call that arrived after its run gave up on it.
    }
    Atomics.store(flag, ANSWER_SLOT, WAITING);
    post({ kind: "call", name, params });
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) {
        const { message } = timeoutOutcome(timeoutMs);
        return { error: "TimeoutError", message, timedOut: true };
      }
      Atomics.wait(flag, ANSWER_SLOT, WAITING, remaining);
      const received = receiveMessageOnPort(init.answers);
      if (!received) continue;
      const answer = received.message as AnswerMessage;
      if ("error" in answer && answer.final) refusal = answer;
      return answer;
    }
  };
}

/**
 * A run's `console` sink: keeps the last lines, and posts the first `LOG_LIMITS.posted` to the
 * main thread as they come, for a run whose thread gets terminated before it answers.
 */
function logSink(tail: LogTail): (line: string) => void {
  return (line) => {
    const kept = tail.add(line);
    if (tail.total <= LOG_LIMITS.posted) post({ kind: "log", line: kept });
  };
}

/** Runs one script; resolves once the thread may take the next. */
async function serve(message: RunMessage): Promise<void> {
  const deadline = performance.now() + message.timeoutMs;
  const current = next;
  const tail = message.report ? new LogTail() : undefined;
  const { outcome, reusable } = runScript(current, {
    source: message.source,
    inputs: message.inputs,
    timeoutMs: message.timeoutMs,
    deadline,
    limits: message.limits,
    callTool: message.canCall ? blockingCall(deadline, message.timeoutMs) : undefined,
    cancelled,
    ...(tail ? { log: logSink(tail) } : {}),
    ...(message.maxResultChars === undefined ? {} : { maxResultChars: message.maxResultChars }),
  });
  const done: WorkerMessage = { kind: "done", outcome, ...(tail ? { logs: tail.snapshot() } : {}) };
  if (reusable) {
    // The answer goes out first; restoring the context (or, for a build whose contexts are not
    // reused, freeing this one and making the next) follows, off the critical path. Nothing runs
    // here until it is done, so no run can start before its context is ready.
    post(done);
    next = finishRun(current, true) ?? prepareRun(loaded);
    return;
  }
  // A module whose memory grew or whose heap an exception left inconsistent is replaced before
  // the answer goes out (instantiating the compiled module takes about a millisecond): the next
  // run may follow at once.
  finishRun(current, false);
  loaded = await loadModule(init.quickjs, init.memoryBytes);
  next = prepareRun(loaded);
  post(done);
}

post({ kind: "ready", priority: workerPriority });

// Between runs the thread sleeps on the count of runs posted, not in its event loop: the main
// thread's notify wakes it straight into the next run (terminating the thread ends the wait).
let taken = 0;
for (;;) {
  Atomics.wait(flag, JOBS_SLOT, taken);
  const received = receiveMessageOnPort(init.jobs);
  if (received === undefined) {
    // Counted before it could be read: look again shortly, never spin.
    Atomics.wait(flag, JOBS_SLOT, Atomics.load(flag, JOBS_SLOT), 1);
    continue;
  }
  taken++;
  await serve(received.message as RunMessage);
}
