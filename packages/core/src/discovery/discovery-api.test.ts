import { describe, expect, it } from "vitest";
import { processRecordOf } from "../../../../test/support/process-record";
import type { ProcessRecord } from "../ports/state-store";
import type { SurfaceTool } from "../surface/classify";
import type { ProcessSurface } from "../surface/tool-surface";
import type { ToolSnapshot } from "../tools/tool-snapshot";
import { DiscoveryApi, SEARCH_ACTIVATES } from "./discovery-api";
import { searchDocument } from "./search-document";
import { buildSearchIndex, SearchIndex } from "./search-index";
import { inProcessSearchIndexBuilder, searchIndexView } from "./search-index-cache";

const RECORD: ProcessRecord = processRecordOf(
  { tenant: "acme", project: "shop", processId: "p1" },
  { models: [] },
);

const tool = (name: string, description: string): SurfaceTool => ({
  name,
  description,
  inputSchema: { type: "object" },
  origin: "configured",
  primary: false,
  defaultDeferred: true,
});

/** Twenty deferred `crm_*` tools, the floor pair primary; what the bookkeeping was asked to activate. */
function setup(maxActivated?: number) {
  const deferred = Array.from({ length: 20 }, (_, i) =>
    tool(`crm_contact_op${String(i).padStart(2, "0")}`, `Contact operation ${i} for a customer contact.`),
  );
  const floor = [tool("tool_description", "Describes."), tool("tool_list", "Lists.")];
  const surface: ProcessSurface = {
    tools: new Map([...deferred, ...floor].map((t) => [t.name, t])),
    classification: {
      primary: floor.map((t) => t.name),
      deferred: deferred.map((t) => t.name),
      demoted: [],
      demotedUnits: [],
      staticDeferred: deferred.map((t) => t.name),
    },
    stalePacks: [],
    maxTools: null,
    limit: null,
    maxToolTokens: null,
  };
  const activated: string[][] = [];
  // The project's search index, as the cache would hand it over (built here, on the test's thread).
  const index = new SearchIndex(
    buildSearchIndex(
      deferred.map((t) =>
        searchDocument({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
      ),
    ),
  );
  const api = new DiscoveryApi({
    searchIndex: searchIndexView(inProcessSearchIndexBuilder).view,
    surface: { classify: async () => surface, wasDeferred: async () => true },
    bookkeeping: {
      called: async () => undefined,
      countCalls: async () => undefined,
      described: async (_record, _described, activate) => {
        activated.push([...activate]);
      },
    },
    ...(maxActivated === undefined ? {} : { maxActivated }),
  });
  const bound = (invokeTool: boolean) =>
    api.forProcess(RECORD, async () => ({ value: null }), [], {
      activates: true,
      // The request's snapshot, answering the project's index as its view.
      snapshot: { view: async () => index } as unknown as ToolSnapshot,
      invokeTool,
    });
  return { bound, activated, names: deferred.map((t) => t.name) };
}

describe("DiscoveryApi: what tool_search and tool_description activate", () => {
  it("tool_search answers 5 by default and activates only the first 3", async () => {
    const { bound, activated } = setup();
    const found = await bound(false).search("customer contact operation", undefined);
    const value = (found as { value: { tools: { name: string }[]; activated: string[] } }).value;
    expect(value.tools).toHaveLength(5);
    expect(SEARCH_ACTIVATES).toBe(3);
    expect(value.activated).toEqual(value.tools.slice(0, 3).map((t) => t.name));
    expect(activated).toEqual([value.activated]);
  });

  it("tool_description activates at most the cap and names the rest; howToCall names invoke_tool only where the caller has it", async () => {
    const { bound, activated, names } = setup(4);
    const described = await bound(true).describe(names.slice(0, 6));
    const value = (described as { value: { activated: string[]; note: string; howToCall: string } }).value;
    expect(value.activated).toEqual(names.slice(0, 4));
    expect(activated).toEqual([names.slice(0, 4)]);
    expect(value.note).toContain(`describe ${names.slice(4, 6).join(", ")} again`);
    expect(value.howToCall).toContain("invoke_tool");
    const plain = (await bound(false).describe(names.slice(0, 1))) as { value: Record<string, unknown> };
    expect(plain.value.howToCall).not.toContain("invoke_tool");
    expect(plain.value).not.toHaveProperty("note");
  });
});
