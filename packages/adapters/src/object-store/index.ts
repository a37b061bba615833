// The memory and counting stores are test doubles: `@vance/adapters/testing`.
export { FsObjectStore, type FsObjectStoreOptions, InvalidObjectKeyError } from "./fs";
export { contentTypeForKey } from "./keys";
export {
  createS3Client,
  type S3ClientSettings,
  S3ObjectStore,
  type S3ObjectStoreOptions,
} from "./s3";
