export {
  createGuardedFetch,
  createGuardedHttp,
  dnsHostResolver,
  type GuardedFetchOptions,
  type GuardedHttp,
} from "./resolver";
