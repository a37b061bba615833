// Test doubles, apart from the package index: production code never imports this entry (a test checks it).
export { CountingObjectStore, type ObjectStoreCallCounts } from "./object-store/counting";
export { MemoryObjectStore, type MemoryObjectStoreOptions } from "./object-store/memory";
export { inProcessOpenApiCompiler } from "./openapi/in-process";
