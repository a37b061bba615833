/**
 * The generations port: a counter per marker (a document layer, the observed limits, the
 * catalog) that every write of what it stands for bumps, so a warm instance tells "unchanged"
 * from one small read.
 */
export interface GenerationStore {
  /**
   * Atomic increment (DynamoDB `ADD`): concurrent bumps are all counted. An absent marker counts
   * as 0. Answers the new value.
   */
  bumpGeneration(marker: string): Promise<number>;
  /** The generations of these markers, in order, in one request; a marker never bumped is 0. */
  getGenerations(markers: readonly string[]): Promise<number[]>;
}
