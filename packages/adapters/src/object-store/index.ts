// The memory and counting stores are test doubles: `@vance/adapters/testing`.
export { FsObjectStore, type FsObjectStoreOptions, InvalidObjectKeyError } from "./fs";
export { contentTypeForKey } from "./keys";
// The S3 store is `@vance/adapters/aws` (src/aws.ts), with the rest of the AWS SDK's adapters.
