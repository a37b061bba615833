import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

// Issue 35: tool_search's index is built once per (project, generation), on the task worker
// (the parse worker's `searchIndex` task: testApp keeps the default builder, so the index crosses
// from the worker by structured clone here), and reused by every search.

const tool = (description: string) =>
  `type: doc_lookup\ndescription: ${description}\nlabels: [crm]\nparameters: { path: documents/getting_started.md }\n`;

describe("tool_search's index over HTTP", () => {
  it("10 searches at one generation build the index once; a write builds it again once and its tool is found", async () => {
    const { app, services } = await testApp();
    const client = await projectClient(app);
    await client.putTool("find_customer", tool("Finds a customer by their email address"));
    await client.putTool("list_orders", tool("Lists the orders of a customer"));
    const spawned = await client.spawn({ allowedToolsAdd: ["tool_search", "@crm"] });
    const before = services.searchIndexes.builds();

    for (let search = 0; search < 10; search++) {
      const found = await client.invoke(spawned.processId, "tool_search", {
        query: "look up a customer by email",
      });
      expect(found.status).toBe(200);
      expect((found.body.value as { tools: { name: string }[] }).tools[0]?.name).toBe("find_customer");
    }
    expect(services.searchIndexes.builds() - before).toBe(1);

    // A write to the project is a new generation: the next search builds once, and sees the new tool.
    await client.putTool("refund_order", tool("Refunds an order to the customer's card"));
    const later = await client.spawn({ allowedToolsAdd: ["tool_search", "@crm"] });
    for (let search = 0; search < 5; search++) {
      const found = await client.invoke(later.processId, "tool_search", {
        query: "refund an order",
      });
      expect((found.body.value as { tools: { name: string }[] }).tools[0]?.name).toBe("refund_order");
    }
    expect(services.searchIndexes.builds() - before).toBe(2);
    // The index answers only what the process may call: the first process was spawned before
    // refund_order existed (labels resolve at spawn), so its search never offers it.
    const first = await client.invoke(spawned.processId, "tool_search", { query: "refund an order" });
    const names = (first.body.value as { tools: { name: string }[] }).tools.map((found) => found.name);
    expect(names).not.toContain("refund_order");
    expect(services.searchIndexes.builds() - before).toBe(2);
  }, 60_000);
});
