export { CountingObjectStore, type ObjectStoreCallCounts } from "./counting";
export { FsObjectStore, type FsObjectStoreOptions, InvalidObjectKeyError } from "./fs";
export { contentTypeForKey, MemoryObjectStore, type MemoryObjectStoreOptions } from "./memory";
export {
  createS3Client,
  type S3ClientSettings,
  S3ObjectStore,
  type S3ObjectStoreOptions,
} from "./s3";
