import type { GenerationStore } from "@vance/core";
import type Database from "better-sqlite3";
import { MAX_IN_PARAMS, StatementsByCount } from "./database";
import { ChangeClock, StampedAnswers } from "./unchanged";

/** Marker lists whose generations are kept between changes of the database (a few per project). */
const KEPT_READS = 1024;

/** Generation markers in the `generations` table. */
export class SqliteGenerationStore implements GenerationStore {
  readonly #bump;
  readonly #reads: StatementsByCount;
  readonly #clock: ChangeClock;
  /** Answers of {@link read} by marker list, while the database has not changed. */
  readonly #answered = new StampedAnswers<readonly number[]>(KEPT_READS);

  constructor(db: Database.Database) {
    this.#clock = new ChangeClock(db);
    this.#bump = db.prepare(
      `INSERT INTO generations (marker, generation) VALUES (?, 1)
       ON CONFLICT DO UPDATE SET generation = generation + 1
       RETURNING generation`,
    );
    this.#reads = new StatementsByCount(
      db,
      (keys) => `SELECT marker, generation FROM generations WHERE marker IN (${keys})`,
    );
  }

  /** One UPSERT statement: atomic on its own, also across processes sharing the file. */
  async bumpGeneration(marker: string): Promise<number> {
    const row = this.#bump.get(marker) as { generation: number };
    return row.generation;
  }

  async getGenerations(markers: readonly string[]): Promise<number[]> {
    return this.read(markers);
  }

  /**
   * The markers' generations, synchronously: inside another port's read transaction too. The same
   * markers read again while the database has not changed (`ChangeClock`) are answered as before.
   */
  read(markers: readonly string[]): number[] {
    const stamp = this.#clock.now();
    const key = markers.join("\n");
    const answered = this.#answered.get(stamp, key);
    if (answered !== undefined) return [...answered];
    const generations = this.#read(markers);
    this.#answered.set(stamp, key, generations.slice());
    return generations;
  }

  #read(markers: readonly string[]): number[] {
    const found = new Map<string, number>();
    const unique = [...new Set(markers)];
    for (let i = 0; i < unique.length; i += MAX_IN_PARAMS) {
      const chunk = unique.slice(i, i + MAX_IN_PARAMS);
      const rows = this.#reads.get(chunk.length).all(...chunk) as { marker: string; generation: number }[];
      for (const row of rows) found.set(row.marker, row.generation);
    }
    return markers.map((marker) => found.get(marker) ?? 0);
  }
}
