/** A `doc_lookup` tool document as the benches' synthetic projects hold them. */
export function toolDocument(name: string, primary: boolean): string {
  return [
    "type: doc_lookup",
    `description: Bench tool ${name}; looks up a document of the cascade.`,
    "labels: [bench]",
    `primary: ${primary}`,
    "parameters:",
    "  path: documents/getting_started.md",
    "",
  ].join("\n");
}
