/** Tool documents: `{tenant}/{project}/{path}`. */
export const documents = new sst.aws.Bucket("Documents");

/** The model catalog: `model/{instance}/*.yaml` and the compiled `catalog.json`. */
export const catalog = new sst.aws.Bucket("Catalog");

/** Usage counters, process records, observed tool limits, fire-once markers, sealed tenant secrets (single table). */
export const state = new sst.aws.Dynamo("State", {
  fields: { pk: "string", sk: "string" },
  primaryIndex: { hashKey: "pk", rangeKey: "sk" },
  ttl: "expiresAt",
});
