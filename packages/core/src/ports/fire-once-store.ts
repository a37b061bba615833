/** The fire-once port: markers that let one caller across every instance act (log, post) once. */
export interface FireOnceStore {
  /**
   * `true` for the first caller of this marker, `false` for every later one (across instances)
   * until `ttlSeconds` have passed.
   */
  markOnce(marker: string, ttlSeconds: number): Promise<boolean>;
}
