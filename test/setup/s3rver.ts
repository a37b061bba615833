import type { TestProject } from "vitest/node";
import { startS3rver } from "../support/s3rver";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the s3rver started for this run (path-style, credentials S3RVER/S3RVER). */
    s3Endpoint: string;
  }
}

/**
 * Vitest global setup: runs s3rver on 127.0.0.1 (free port, temp directory, bucket `vance-test`)
 * in a child process, because ListObjectsV2 pagination needs `--openssl-legacy-provider`.
 * The process handling lives in `test/support/s3rver.ts`, shared with the benches.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const s3rver = await startS3rver();
  project.provide("s3Endpoint", s3rver.endpoint);
  return () => s3rver.stop();
}
