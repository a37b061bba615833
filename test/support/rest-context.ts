import { createGuardedFetch, dnsHostResolver } from "@vance/adapters";
import {
  type HostResolver,
  type HttpFetch,
  type InvocationContext,
  JsonSchemaValidator,
  type NetworkPolicy,
} from "@vance/core";

/** An InvocationContext for calling the `rest` type directly, over the real adapters; options replace single parts. */
export function restContext(options: {
  policy: NetworkPolicy;
  /** What `${secret:NAME}` resolves to for this call. */
  secrets?: Record<string, string>;
  fetch?: HttpFetch;
  resolveHost?: HostResolver;
  signal?: AbortSignal;
}): InvocationContext {
  const secrets = options.secrets ?? {};
  const resolveHost = options.resolveHost ?? dnsHostResolver;
  return {
    caller: { tenant: "acme", project: "shop" },
    networkPolicy: options.policy,
    jsonSchemas: new JsonSchemaValidator(),
    signal: options.signal ?? new AbortController().signal,
    depth: 0,
    runtime: {
      fetch: options.fetch ?? createGuardedFetch(options.policy, { resolve: resolveHost }),
      resolveHost,
      scripts: {
        run: async () => {
          throw new Error("no scripts in rest tests");
        },
      },
      now: () => Date.now(),
    },
    readDocument: async () => null,
    readHit: async () => null,
    secret: async (name) => secrets[name],
    secretsFor: () => async (name) => secrets[name],
    callTool: async () => ({ error: "NotAvailable", message: "no sibling tools in rest tests" }),
  };
}
