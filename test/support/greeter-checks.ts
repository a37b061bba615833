import { expect } from "vitest";
import type { ServiceHost } from "./engine-host";
import type { FakeProvider } from "./fake-providers";
import { GREETER_MAX_TOOLS } from "./greeter";

/**
 * The system text a fake received, in order: Anthropic's system blocks; the Responses API's
 * `instructions` and its system input items; Chat Completions' system messages.
 */
function systemBlocksOf(body: Record<string, unknown>): string[] {
  if (Array.isArray(body.system)) return (body.system as { text: string }[]).map((block) => block.text);
  const systemOf = (messages: unknown) =>
    ((messages ?? []) as { role?: string; content: string }[])
      .filter((message) => message.role === "system")
      .map((message) => message.content);
  if (typeof body.instructions === "string") return [body.instructions, ...systemOf(body.input)];
  return systemOf(body.messages);
}

/** What both wire formats must show for the task (the "What it must show"). */
export function expectTheTask(service: ServiceHost, fake: FakeProvider, from: number, project: string) {
  const requests = fake.requests.slice(from);
  // Turn 1 refused with 8 tools, rebuilt once with 4; turn 2 has `greet`, activated by turn 1's description.
  expect(requests.map((request) => [request.refused, request.toolNames.length])).toEqual([
    [true, 8],
    [false, 4],
    [false, 4],
    [false, 4],
    [false, 4],
  ]);
  expect(requests[1]!.toolNames).not.toContain("greet");
  expect(requests[2]!.toolNames).toContain("greet");
  const reports = service.callsTo("/v1/models/observed-limits", "POST");
  expect(reports.map((call) => call.answer)).toContainEqual(
    expect.objectContaining({ maxTools: GREETER_MAX_TOOLS }),
  );
  const greets = service.calls.filter(
    (call) =>
      call.path.includes(`/projects/${project}/processes/`) &&
      call.path.endsWith("/invoke") &&
      (call.body as { name?: string }).name === "greet",
  );
  expect(greets.map((call) => call.answer)).toMatchObject([{ value: "Hello, Ada!" }]);
  // The static block is byte-identical across turns; the demoted block changes when greet is activated.
  const blocks = requests.map((request) => systemBlocksOf(request.body));
  expect(new Set(blocks.map((block) => block[0])).size).toBe(1);
  expect(blocks[0]![0]).toContain("- greet — Greets someone by name.");
  expect(blocks[0]!.length).toBe(1); // nothing demoted before the limit was known
  expect(blocks[1]![1]).toContain("alpha_info");
  expect(blocks[2]![1]).not.toBe(blocks[1]![1]);
  // The dropped call: one report, naming the phantom from the prompt.
  expect(requests[4]!.dropped).toEqual(["farewell"]);
}
