import type { ProcessKey, ProcessRecord } from "@vance/core";

/*
 * A process record for tests, in a module of its own with type imports only: the core's unit
 * tests use it too, without loading the adapters `fixtures.ts` brings.
 */

/** A process record of `key` with an empty allow set and one model, `overrides` set over it. */
export function processRecordOf(key: ProcessKey, overrides: Partial<ProcessRecord> = {}): ProcessRecord {
  return {
    ...key,
    createdAt: "2026-01-01T00:00:00.000Z",
    recipe: null,
    engine: null,
    role: "default",
    allowedTools: [],
    allowedPacks: [],
    excludedTools: [],
    allowedToolsAdd: [],
    allowedToolsKeep: [],
    allowedToolsDefer: [],
    allowedToolsDropFirst: [],
    models: ["openai/gpt-4.1"],
    clientTools: [],
    activatedTools: {},
    ...overrides,
  };
}
