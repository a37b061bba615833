/**
 * The content type of a document by its path's extension: what the stores infer when a write
 * names none (so they agree with what the bundled layer ships), and what `vance-tools push` sends.
 */
export function contentTypeForPath(path: string): string {
  const dot = path.lastIndexOf(".");
  const extension = dot > path.lastIndexOf("/") ? path.slice(dot + 1).toLowerCase() : "";
  switch (extension) {
    case "yaml":
    case "yml":
      return "application/yaml";
    case "json":
      return "application/json";
    case "js":
    case "mjs":
      return "application/javascript";
    case "md":
      return "text/markdown";
    default:
      return "text/plain";
  }
}
