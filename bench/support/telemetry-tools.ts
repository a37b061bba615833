/**
 * The tools both telemetry benches store (`telemetry`, `telemetry-inprocess`): `add` (a + b),
 * `summary` (one sibling call of `add`), and `count - 2` more under the same label, so a
 * manifest has `count` tools to build. Name → YAML document.
 */
export function telemetryBenchTools(count: number): [name: string, document: string][] {
  return [
    [
      "add",
      "type: scripted\ndescription: a + b\nlabels: [bench]\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number }\n  source: a + b\n",
    ],
    [
      "summary",
      `type: scripted\ndescription: one sibling call\nlabels: [bench]\nparameters:\n  inputs:\n    - { name: a, type: number }\n  source: ${JSON.stringify('vance.tools.call("add", { a, b: 1 })')}\n`,
    ],
    ...Array.from({ length: count - 2 }, (_, i): [string, string] => [
      `tool_${i}`,
      `type: scripted\ndescription: Tool ${i} of the bench\nlabels: [bench]\nparameters:\n  inputs: []\n  source: "${i}"\n`,
    ]),
  ];
}
