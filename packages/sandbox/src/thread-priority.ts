import { getPriority, setPriority } from "node:os";

/**
 * What a worker thread says about its priority when it is ready: the nice value it runs at, and
 * why it could not lower it (null when it did, or was not asked to).
 */
export interface ThreadPriority {
  readonly nice: number;
  readonly problem: string | null;
}

/**
 * Lowers the calling worker thread's CPU priority by `steps` nice levels below the thread that
 * started it (to at most 19), so that the serving thread wins the CPU over scripts and parses.
 * Only on Linux: there `setpriority(PRIO_PROCESS, 0, …)` applies to the calling thread alone
 * (NPTL threads are tasks of their own); elsewhere it would lower the whole server, so the
 * thread keeps its priority and says why. Never throws.
 */
export function lowerThreadPriority(steps: number): ThreadPriority {
  const own = safeGetPriority();
  if (steps === 0) return { nice: own, problem: null };
  if (process.platform !== "linux") {
    return {
      nice: own,
      problem: `thread priorities are per process on ${process.platform}: worker threads keep the server's`,
    };
  }
  const nice = Math.min(19, own + steps);
  try {
    setPriority(nice);
    return { nice, problem: null };
  } catch (error) {
    return { nice: own, problem: error instanceof Error ? error.message : String(error) };
  }
}

function safeGetPriority(): number {
  try {
    return getPriority();
  } catch {
    return 0;
  }
}
