/**
 * The state store: small mutable records that must be shared by every function instance, as
 * six narrow ports — process records (`ProcessStore`), tool usage counters (`UsageStore`),
 * observed tool limits (`ObservedLimitStore`), generation markers (`GenerationStore`),
 * fire-once markers (`FireOnceStore`) and per-tenant quota counters (`QuotaStore`). Each consumer takes the port it needs. DynamoDB implements
 * them in the cloud (one table, single-table design), SQLite locally; every mutation is atomic on
 * its own, and no method reads-then-writes across calls.
 */
import type { FireOnceStore } from "./fire-once-store";
import type { GenerationStore } from "./generation-store";
import type { ObservedLimitStore } from "./observed-limit-store";
import type { ProcessStore } from "./process-store";
import type { QuotaStore } from "./quota-store";
import type { UsageStore } from "./usage-store";

export type { FireOnceStore } from "./fire-once-store";
export type { GenerationStore } from "./generation-store";
export type { ObservedLimitStore, ObservedToolLimit } from "./observed-limit-store";
export type {
  ClientToolDeclaration,
  LiveProcesses,
  ProcessKey,
  ProcessRecord,
  ProcessStore,
  ProcessWithGenerations,
} from "./process-store";
export type { QuotaStore } from "./quota-store";
export type { ToolUsageDelta, ToolUsageKey, ToolUsageRow, UsageStore } from "./usage-store";
export { USAGE_TOKEN_WINDOW_MS } from "./usage-store";

/**
 * All five ports over one store (one DynamoDB table, one SQLite file): what the composition root
 * builds and hands out port by port; no service takes it whole.
 */
export interface StateStore
  extends ProcessStore,
    UsageStore,
    ObservedLimitStore,
    GenerationStore,
    FireOnceStore,
    QuotaStore {}
