// The task worker of task-pool.test.ts: a task that answers, one that throws, one that never ends.
import { serveTasks } from "./serve-tasks";

serveTasks({
  echo: (input: unknown) => ({ echoed: input }),
  fail: (input: string) => {
    throw new Error(`failed on ${input}`);
  },
  spin: () => {
    for (;;) {
      // Only terminating the thread ends this.
    }
  },
});
