import { pathToFileURL } from "node:url";

let from;
let to;

/** `data`: the project's better-sqlite3 folder and the copy built for this Node's ABI. */
export function initialize(data) {
  from = pathToFileURL(`${data.from}/`).href;
  to = pathToFileURL(`${data.to}/`).href;
}

/** Bare `better-sqlite3` and any file of the project's copy (vitest imports resolved paths) go to the Node 22 build. */
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  return resolved.url.startsWith(from)
    ? { ...resolved, url: to + resolved.url.slice(from.length) }
    : resolved;
}
