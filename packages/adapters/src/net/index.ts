export { createGuardedFetch, dnsHostResolver, type GuardedFetchOptions } from "./resolver";
