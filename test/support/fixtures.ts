import { CountingObjectStore, MemoryObjectStore } from "@vance/adapters/testing";
import {
  type BuiltInTool,
  type BundledDocuments,
  builtInToolTypes,
  type DispatchRequest,
  DocumentCascade,
  type Generations,
  NO_INPUT_SCHEMA,
  type ObjectStore,
  ServerToolService,
  type ToolDispatcher,
  ToolTypeRegistry,
  whoami,
} from "@vance/core";

/** A tool document of type doc_lookup with the given extra YAML lines. */
export function docTool(description: string, extra = ""): string {
  return `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/x.md\n${extra}`;
}

/** A built-in tool for tests, labelled `web`. */
export const webSearch: BuiltInTool = {
  name: "web_search",
  description: "Searches the web (test double).",
  labels: ["web"],
  primary: true,
  inputSchema: NO_INPUT_SCHEMA,
  async invoke() {
    return { value: [] };
  },
};

/**
 * Builds a ServerToolService over a counting store; the bundled layer is a map. Without
 * `generations` every read revalidates against the store.
 */
export function toolServices(
  options: {
    bundled?: Record<string, string>;
    store?: ObjectStore;
    builtIns?: BuiltInTool[];
    generations?: Generations;
  } = {},
) {
  const store = new CountingObjectStore(options.store ?? new MemoryObjectStore());
  const bundled: BundledDocuments = new Map(
    Object.entries(options.bundled ?? {}).map(([path, body]) => [
      path,
      { body, contentType: "application/yaml" },
    ]),
  );
  const types = new ToolTypeRegistry(builtInToolTypes());
  const cascade = new DocumentCascade(
    store,
    bundled,
    options.generations ? { generations: options.generations } : {},
  );
  const tools = new ServerToolService(cascade, types, options.builtIns ?? [whoami, webSearch]);
  return { store, cascade, tools, types };
}

/** A dispatcher whose calls each take one snapshot of their caller's project first, as a route does. */
export function snapshotting(dispatcher: ToolDispatcher, tools: Pick<ServerToolService, "snapshot">) {
  return {
    invoke: async (request: Omit<DispatchRequest, "snapshot">) =>
      dispatcher.invoke({
        ...request,
        snapshot: await tools.snapshot(request.caller.tenant, request.caller.project),
      }),
  };
}
