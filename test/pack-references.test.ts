import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { type McpTestServer, startMcpTestServer } from "./support/mcp-test-server";

// A pack in a process's allow set is kept as a reference to the pack: a pack whose MCP server is
// down at spawn is said so in the answer, marked in the manifest, tool_list and the discovery
// block, and its sub-tools become callable by that same process once the server answers.

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let started: McpTestServer | undefined;
afterEach(async () => {
  await started?.stop();
  started = undefined;
});

describe("packs by reference (an MCP server down at spawn)", () => {
  it("the spawn says the pack is unavailable; once the server answers, the process's pack__op call succeeds without a new spawn", async () => {
    const port = await freePort();
    const now = { t: 10_000_000 };
    const { app } = await testApp({ now: () => now.t, env: { VANCE_NETWORK_ALLOWLIST: "127.0.0.1" } });
    const client = await projectClient(app);
    const server = await client.call(
      "PUT",
      "/documents/mcp-servers/slow.yaml",
      `url: http://127.0.0.1:${port}/mcp\ntimeoutMs: 2000\n`,
      "application/yaml",
    );
    expect(server.status).toBe(201);
    await client.putTool(
      "slowp",
      "type: mcp_server\ndescription: A server that is late\nlabels: [mcp]\nparameters:\n  server: slow\n  promptHint: The late server - echo and friends\n",
    );

    const spawned = await client.spawn({
      allowedToolsAdd: ["slowp", "@mcp"],
      allowedToolsRemove: ["slowp__fail"],
    });
    expect(spawned).toMatchObject({
      allowedTools: [],
      allowedPacks: ["slowp"],
      excludedTools: ["slowp__fail"],
      stalePacks: [{ pack: "slowp", status: "unavailable", reason: expect.stringContaining("slowp") }],
      warnings: [],
    });
    const { processId } = spawned;

    const before = await client.manifest(processId);
    expect(before.stalePacks).toEqual(spawned.stalePacks);
    expect(before.discoveryBlock).toContain("- slowp__* — unavailable right now");
    expect(before.primary).toEqual(["tool_description", "tool_list"]);
    const listedBefore = (await client.invoke(processId, "tool_list")).body.value as Record<string, unknown>;
    expect(listedBefore.stalePacks).toEqual([
      expect.objectContaining({ pack: "slowp", status: "unavailable" }),
    ]);
    const tooEarly = await client.invoke(processId, "slowp__echo", { message: "hello" });
    expect(tooEarly.status).toBe(200);
    expect(tooEarly.body).toMatchObject({ error: "SourceUnavailable" });
    const read = await client.call("GET", "/tools/slowp__echo");
    expect(read).toMatchObject({ status: 502, body: { code: "source_unavailable" } });
    const project = await client.call("GET", "/tools");
    expect(project.body.stalePacks).toEqual([
      expect.objectContaining({ pack: "slowp", status: "unavailable" }),
    ]);

    // The server comes up on the address the document names; the failed read is retried once
    // the retry pause (5 s of the service's clock) is over.
    started = await startMcpTestServer({ port });
    now.t += 6_000;

    const called = await client.invoke(processId, "slowp__echo", { message: "hello" });
    expect(called.body).toMatchObject({ value: "hello" });
    const after = await client.manifest(processId);
    expect(after.stalePacks).toEqual([]);
    // Its call activated slowp__echo (it was outside the tools array); the others are deferred.
    expect(after.primary).toContain("slowp__echo");
    expect(after.deferred).toEqual(expect.arrayContaining(["slowp__add_tool", "slowp__get_weather"]));
    expect([...after.primary, ...after.deferred]).not.toContain("slowp__fail");
    expect(after.discoveryBlock).toContain("- slowp__* (");
    expect(after.discoveryBlock).not.toContain("unavailable right now");
    const excluded = await client.invoke(processId, "slowp__fail", {});
    expect(excluded).toMatchObject({ status: 403, body: { code: "tool_not_allowed" } });

    // Down again after its list aged (60 s): the last known sub-tools stay, marked stale.
    await started.stop();
    now.t += 61_000;
    const stale = await client.manifest(processId);
    expect(stale.stalePacks).toEqual([expect.objectContaining({ pack: "slowp", status: "stale" })]);
    expect(stale.primary).toContain("slowp__echo");

    // Still the process spawned before: its record is what it was.
    const record = await client.process(processId);
    expect(record).toMatchObject({
      allowedTools: [],
      allowedPacks: ["slowp"],
      excludedTools: ["slowp__fail"],
    });
  });
});
