import { performance } from "node:perf_hooks";

/** One measured operation: `once` runs `perRound` times in each round. */
export interface BenchCase {
  readonly name: string;
  readonly perRound: number;
  readonly once: () => Promise<unknown> | unknown;
}

/**
 * Warms every case up, then runs `rounds` rounds that each run every case in turn, so that a
 * noisy moment of the machine falls on all cases alike. Answers each case's samples (ms) by name
 * and the measured time in seconds.
 */
export async function interleavedRounds(
  cases: readonly BenchCase[],
  options: { readonly rounds: number; readonly warmup: number },
): Promise<{ samples: Map<string, number[]>; elapsedSeconds: number }> {
  for (const bench of cases) for (let i = 0; i < options.warmup; i++) await bench.once();
  const samples = new Map<string, number[]>(cases.map((bench) => [bench.name, []]));
  const started = performance.now();
  for (let round = 0; round < options.rounds; round++) {
    for (const bench of cases) {
      const times = samples.get(bench.name)!;
      for (let i = 0; i < bench.perRound; i++) {
        const t0 = performance.now();
        await bench.once();
        times.push(performance.now() - t0);
      }
    }
  }
  return { samples, elapsedSeconds: (performance.now() - started) / 1000 };
}
