import type { VanceClient } from "@vance/client";
import type { EngineEvent, SpawnOptions } from "@vance/engine";
import type { ScriptedReply } from "./fake-providers";

/**
 * The task every engine test and adapter runs: greet Ada with a tool that is deferred (listed in
 * the static discovery block, outside the tools array), under an endpoint whose tools-array
 * limit the catalog does not know. Six plain primary tools of six families (`alpha_info` …) and
 * the floor make 8 tools; the fake endpoint takes at most 5, so the first request is refused,
 * the limit is learned, and the rebuilt manifest has 4 (one slot is the engine's reserve) with
 * four families demoted. Activating `greet` then demotes one family more, so the demoted block
 * changes between turns while the static block cannot.
 */
export const GREETER_MAX_TOOLS = 5;

export const PLAIN_TOOLS = [
  "alpha_info",
  "bravo_info",
  "charlie_info",
  "delta_info",
  "echo_info",
  "foxtrot_info",
];

export const GREETER_DOCUMENTS: Record<string, string> = {
  greet: `type: scripted
description: Greets someone by name.
parameters:
  inputs:
    - { name: name, type: string }
  source: '"Hello, " + name + "!"'
`,
  farewell: `type: scripted
description: Says goodbye to someone by name.
parameters:
  inputs:
    - { name: name, type: string }
  source: '"Goodbye, " + name + "!"'
`,
  ...Object.fromEntries(
    PLAIN_TOOLS.map((name) => [
      name,
      `type: scripted
description: Facts about ${name.split("_")[0]}.
primary: true
parameters:
  inputs: []
  source: '"${name}"'
`,
    ]),
  ),
};

/** Puts the task's tools into the client's project (as an engine's set-up would). */
export async function setUpGreeter(client: VanceClient, tenant: string, project: string): Promise<void> {
  const tools = client.project(tenant, project);
  for (const [name, document] of Object.entries(GREETER_DOCUMENTS)) await tools.putTool(name, document);
}

/** The spawn of the task's process for `model` (`instance/slug`). */
export const greeterSpawn = (model: string): SpawnOptions => ({
  engine: "greeter",
  engineDefault: ["greet", "farewell", ...PLAIN_TOOLS],
  models: [model],
});

export const GREETER_SYSTEM = "You greet people. Use your tools.";
export const GREETER_PROMPT = "Greet Ada, please.";

/** The model's side of the task: describe `greet`, call it, answer — then, streamed, call `farewell` unactivated. */
export const GREETER_SCRIPT: readonly ScriptedReply[] = [
  { toolCalls: [{ name: "tool_description", arguments: { names: ["greet"] } }] },
  { toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] },
  { text: "I greeted Ada: Hello, Ada!" },
  // The drop: `farewell` was never described, so it is not in the tools array, and the endpoint drops the call.
  { toolCalls: [{ name: "farewell", arguments: { name: "Ada" } }] },
];

export const DROP_PROMPT = "Now say goodbye to Ada.";

/** An engine event as one JSON line on stdout, for the test that runs an adapter in a child process. */
export function printEvent(event: EngineEvent): void {
  switch (event.type) {
    case "turn":
    case "turn_rebuilt":
      console.log(
        JSON.stringify({
          event: event.type,
          tools: event.turn.toolNames,
          demoted: event.turn.manifest.demoted,
        }),
      );
      return;
    case "limit_learned":
      console.log(JSON.stringify({ event: event.type, model: event.model, maxTools: event.maxTools }));
      return;
    case "empty_response":
      console.log(
        JSON.stringify({ event: event.type, requestId: event.requestId, diagnosis: event.diagnosis }),
      );
  }
}

/**
 * A child process's side of an adapter test: the service and project from the environment the
 * CLI reads (`VANCE_URL`, `VANCE_TOKEN`, `VANCE_TENANT`, `VANCE_PROJECT`), the fake endpoint
 * (`PROVIDER_URL`) and the catalog model (`MODEL`); the task's tools set up and its process spawned.
 */
export async function greeterFromEnv() {
  const need = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const { createVanceClient } = await import("@vance/client");
  const { VanceEngine } = await import("@vance/engine");
  const client = createVanceClient({ baseUrl: need("VANCE_URL"), token: need("VANCE_TOKEN") });
  const tenant = need("VANCE_TENANT");
  const project = need("VANCE_PROJECT");
  await setUpGreeter(client, tenant, project);
  const engine = new VanceEngine({ client, tenant, project, onEvent: printEvent });
  const spawned = await engine.spawn(greeterSpawn(need("MODEL")));
  return { process: spawned, providerUrl: need("PROVIDER_URL") };
}

/** Prints one line of what a child did (a tool call, the answer), for the parent's assertions. */
export const printLine = (line: Record<string, unknown>) => console.log(JSON.stringify(line));
