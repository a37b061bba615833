import { Agent, MCPServerStreamableHttp, run } from "@openai/agents";

const { VANCE_URL, VANCE_TOKEN, VANCE_TENANT, VANCE_PROJECT } = process.env;
// T/mcp spawns a process at initialize; `add` and `defer` are the spawn's allowedToolsAdd / allowedToolsDefer.
const vance = new MCPServerStreamableHttp({
  name: "vance",
  url: `${VANCE_URL}/v1/tenants/${VANCE_TENANT}/projects/${VANCE_PROJECT}/mcp?add=greet&defer=greet&models=openai/gpt-4.1`,
  requestInit: { headers: { Authorization: `Bearer ${VANCE_TOKEN}` } },
});
await vance.connect();
try {
  // The Runner lists the tools every turn, so a tool tool_description activated is callable in the next.
  const agent = new Agent({
    name: "greeter",
    instructions: "You greet people.",
    model: "gpt-4.1",
    mcpServers: [vance],
  });
  const result = await run(agent, "Greet Ada.");
  console.log(result.finalOutput);
} finally {
  await vance.close();
}
