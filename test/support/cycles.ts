/**
 * The import cycles of a module graph (module → the modules it imports), each as
 * `a → b → … → a`: a depth-first walk that reports every back edge it meets.
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (module: string, path: string[]) => {
    if (state.get(module) === "done") return;
    if (state.get(module) === "open") {
      cycles.push([...path.slice(path.indexOf(module)), module].join(" → "));
      return;
    }
    state.set(module, "open");
    for (const target of graph.get(module) ?? []) visit(target, [...path, module]);
    state.set(module, "done");
  };
  for (const module of graph.keys()) visit(module, []);
  return cycles;
}
