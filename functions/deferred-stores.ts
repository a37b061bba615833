import type { MemoStats, ObjectStore, SecretStore, StateStore } from "@vance/core";
import type { Config } from "./api/config";

/**
 * The S3 and DynamoDB stores of a function, made at their first call: a cold start loads the AWS
 * SDK (a third of the API's JavaScript, and its clients' set-up) at the first event that reads a
 * store, not before answering one that reads none (a health check). A bad setting still fails
 * the start: the configuration is validated before these are made.
 */

/** The bucket's object store; the SDK loads at its first call. */
export function deferredObjectStore(config: Config, bucket: string): ObjectStore {
  return deferredPort<ObjectStore>(OBJECT_STORE, async () => (await aws()).s3ObjectStore(config, bucket));
}

/** The table's state store; the SDK loads at its first call. `parsedRecords` counts its parsed records. */
export function deferredStateStore(config: Config, parsedRecords?: MemoStats): StateStore {
  return deferredPort<StateStore>(STATE_STORE, async () =>
    (await aws()).dynamoStateStore(config, parsedRecords),
  );
}

/** The table's secret store; the SDK loads at its first call. */
export function deferredSecretStore(config: Config, key: Uint8Array): SecretStore {
  return deferredPort<SecretStore>(SECRET_STORE, async () => (await aws()).dynamoSecretStore(config, key));
}

const aws = () => import("./aws-stores");

// Every method of each port: nothing of an adapter exists to ask before it loads (the types
// check that the lists are whole).
const OBJECT_STORE: PortMethods<ObjectStore> = { get: true, put: true, delete: true, list: true };
const SECRET_STORE: PortMethods<SecretStore> = { get: true, put: true, delete: true, list: true };
const STATE_STORE: PortMethods<StateStore> = {
  createProcess: true,
  getProcess: true,
  deleteProcess: true,
  getProcessAndGenerations: true,
  touchActivatedTools: true,
  removeActivatedTools: true,
  touchProcess: true,
  countLiveProcesses: true,
  addToolUsage: true,
  listToolUsage: true,
  putObservedToolLimit: true,
  getObservedToolLimits: true,
  listObservedToolLimits: true,
  deleteObservedToolLimit: true,
  bumpGeneration: true,
  getGenerations: true,
  markOnce: true,
  addToQuota: true,
  getQuotaUsage: true,
};

type PortMethods<T> = Readonly<Record<keyof T, true>>;
type Method = (...args: unknown[]) => Promise<unknown>;

/**
 * A port whose adapter is made by `load` at the first call (once; a failed load is tried again by
 * the next call); every call then goes to it.
 */
function deferredPort<T extends { readonly [K in keyof T]: (...args: never[]) => Promise<unknown> }>(
  methods: PortMethods<T>,
  load: () => Promise<T>,
): T {
  let made: Promise<Record<string, Method>> | undefined;
  const adapter = () => {
    made ??= load().then(
      (port) => port as unknown as Record<string, Method>,
      (error: unknown) => {
        made = undefined;
        throw error;
      },
    );
    return made;
  };
  const port: Record<string, Method> = {};
  for (const name of Object.keys(methods)) port[name] = async (...args) => (await adapter())[name]!(...args);
  return port as unknown as T;
}
