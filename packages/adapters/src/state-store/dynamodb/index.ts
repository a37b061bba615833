/**
 * The state store on DynamoDB: one table, single-table design, keys `pk` / `sk` (strings), one
 * class per port over a shared {@link DynamoStateTable} (`shared.ts`).
 *
 * | record            | pk                          | sk                 | attributes | port |
 * | ----------------- | --------------------------- | ------------------ | ---------- | ---- |
 * | process           | `PROC#{tenant}#{project}`   | `{processId}`      | the record's fields; `activatedTools` a map name → epoch ms (created empty at spawn); `idleExpiresAt` (epoch ms) and `expiresAt` (epoch seconds, TTL) | `processes.ts` |
 * | live process      | `LIVE#{tenant}`             | `{project}#{processId}` | `idleExpiresAt`, `expiresAt` (TTL): what counts a tenant's live processes | `processes.ts` |
 * | tool usage        | `USAGE#{tenant}#{project}`  | `{role}#{tool}`    | `role`, `tool`, `calls`, `discoveryHits`, `lastUsedAt` (epoch ms) | `usage.ts` |
 * | observed limit    | `LIMIT`                     | `ENDPOINT#{key}`   | `limitKey`, `model`, `maxTools`, `observedAt` (epoch ms) | `observed-limits.ts` |
 * | fire-once marker  | `ONCE`                      | `{marker}`         | `expiresAt` (epoch seconds, the table's TTL attribute) | `fire-once.ts` |
 * | generation        | `GEN#{marker}`              | `GEN`              | `generation` (number, grown with `ADD`) | `generations.ts` |
 * | quota counter     | `QUOTA#{key}`               | `QUOTA`            | `used`; a window's also `expiresAt` (epoch seconds, TTL) | `quotas.ts` |
 *
 * Key parts are escaped (`%` → `%25`, `#` → `%23`) so that no tenant, project, role or tool
 * containing `#` can reach another's items; ordinary ids read unchanged in the console.
 * Values are read back from attributes, never parsed out of keys.
 *
 * Every mutation is one conditional request, except `addToolUsage` with an out-of-order
 * timestamp (two) and the chunked `touchActivatedTools` / `getObservedToolLimits`. What each
 * write does when the SDK retries it after a lost answer is in README ("Writes under retries").
 * Each generation marker has its own partition key: every manifest reads them, so they must not
 * share one hot partition.
 */
import { CompositeStateStore } from "../composite";
import { DynamoFireOnceStore } from "./fire-once";
import { DynamoGenerationStore } from "./generations";
import { DynamoObservedLimitStore } from "./observed-limits";
import { DynamoProcessStore } from "./processes";
import { DynamoQuotaStore } from "./quotas";
import { type DynamoStateStoreOptions, DynamoStateTable } from "./shared";
import { DynamoUsageStore } from "./usage";

export { DynamoFireOnceStore } from "./fire-once";
export { DynamoGenerationStore } from "./generations";
export { DynamoObservedLimitStore } from "./observed-limits";
export { DynamoProcessStore } from "./processes";
export { DynamoQuotaStore } from "./quotas";
export {
  createDynamoClient,
  type DynamoClientOptions,
  DynamoRequestCounter,
  type DynamoStateStoreOptions,
  DynamoStateTable,
  ensureStateTable,
  errorName,
  keyPart,
} from "./shared";
export { DynamoUsageStore } from "./usage";

/**
 * The five ports on one table, for wiring and tests: each port is its own object
 * (`processes`, `usage`, …), and the `StateStore` methods delegate to them ({@link CompositeStateStore}). Requests of
 * all five are counted together ({@link requestCount}).
 */
export class DynamoStateStore extends CompositeStateStore<
  DynamoProcessStore,
  DynamoUsageStore,
  DynamoObservedLimitStore,
  DynamoGenerationStore,
  DynamoFireOnceStore
> {
  readonly table: DynamoStateTable;

  constructor(options: DynamoStateStoreOptions) {
    const table = new DynamoStateTable(options);
    super({
      processes: new DynamoProcessStore(table, options.parsedRecords),
      usage: new DynamoUsageStore(table),
      observedLimits: new DynamoObservedLimitStore(table),
      generations: new DynamoGenerationStore(table),
      fireOnce: new DynamoFireOnceStore(table),
      quotas: new DynamoQuotaStore(table),
    });
    this.table = table;
  }

  /** HTTP requests sent to DynamoDB by this store (SDK retries included) since the last reset. */
  get requestCount(): number {
    return this.table.requestCount;
  }

  /** Starts counting {@link requestCount} from zero. */
  resetRequestCount(): void {
    this.table.resetRequestCount();
  }
}
