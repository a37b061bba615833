import type { LinkedName } from "../functions/linked";
import { stateTableDefinition, stateTableTtlAttribute } from "../packages/adapters/src/state-store/table";
import { dynamoArgs } from "./dynamo-table";

/** Tool documents: `{tenant}/{project}/{path}`. */
export const documents = new sst.aws.Bucket("Documents" satisfies LinkedName);

/** The model catalog: `model/{instance}/*.yaml` and the compiled `catalog.json`. */
export const catalog = new sst.aws.Bucket("Catalog" satisfies LinkedName);

/**
 * Usage counters, process records, observed tool limits, fire-once markers, generations, sealed
 * tenant secrets (single table): the adapter's own definition, the one tests create.
 */
export const state = new sst.aws.Dynamo(
  "State" satisfies LinkedName,
  dynamoArgs(stateTableDefinition("State"), stateTableTtlAttribute),
);
