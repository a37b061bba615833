import { trimChar } from "../../text";
import { isDotSegment, type RestFailure, type RestRequest } from "../rest/index";
import { FORM_MEDIA_TYPE, type OperationTarget, type ParameterTarget } from "./operations";

const DEFAULT_ACCEPT = "application/json, text/plain;q=0.9, */*;q=0.5";
/** Array delimiters of the query styles that are not `form` (a Map: styles come from the document). */
const DELIMITERS: ReadonlyMap<string, string> = new Map([
  ["spaceDelimited", " "],
  ["pipeDelimited", "|"],
]);

/**
 * The request of one operation call: path parameters percent-encoded into the path template
 * below `serverUrl`, query parameters in their OpenAPI style (arrays repeated by default),
 * header parameters, then the pack's own `headers` (secrets already filled; they win over a
 * parameter of the same name), and the `body` property as JSON. A path value that would make a
 * `.` or `..` segment is refused: the URL parser would resolve it and walk the upstream path.
 */
export function buildOperationRequest(
  target: OperationTarget,
  serverUrl: string,
  input: Readonly<Record<string, unknown>>,
  packHeaders: readonly (readonly [string, string])[],
): RestRequest | RestFailure {
  const path = fillPath(target, input);
  if (typeof path !== "string") return path;
  let url: URL;
  try {
    url = new URL(`${trimChar(serverUrl, "/", "end")}${path.startsWith("/") ? "" : "/"}${path}`);
  } catch {
    return { error: "InvalidRequest", message: `${target.method} ${target.path}: the URL is not valid` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { error: "InvalidRequest", message: `${target.method} ${target.path}: the URL is not http(s)` };
  }

  const headers = new Headers();
  const setHeader = (name: string, value: string): RestFailure | null => {
    try {
      headers.set(name, value);
      return null;
    } catch {
      // The platform's message quotes the value, which may hold a secret.
      return { error: "InvalidRequest", message: `header '${name}' has an invalid name or value` };
    }
  };
  for (const parameter of target.parameters) {
    const value = input[parameter.property];
    if (value === undefined || value === null) continue;
    if (parameter.in === "query") appendQuery(url.searchParams, parameter, value);
    if (parameter.in === "header") {
      const failed = setHeader(
        parameter.name,
        parameter.json ? JSON.stringify(value) : simple(value, parameter.explode),
      );
      if (failed) return failed;
    }
  }
  for (const [name, value] of packHeaders) {
    const failed = setHeader(name, value);
    if (failed) return failed;
  }

  const body = target.body ? input[target.body.property] : undefined;
  if (body !== undefined && target.body) headers.set("content-type", target.body.mediaType);
  if (!headers.has("accept")) headers.set("accept", DEFAULT_ACCEPT);
  return {
    url,
    init: {
      method: target.method,
      headers,
      ...(body === undefined
        ? {}
        : { body: FORM_MEDIA_TYPE.test(target.body!.mediaType) ? formBody(body) : JSON.stringify(body) }),
    },
  };
}

/** The path template with every path parameter's value in place, segment by segment. */
function fillPath(target: OperationTarget, input: Readonly<Record<string, unknown>>): string | RestFailure {
  const byName = new Map(target.parameters.filter((p) => p.in === "path").map((p) => [p.name, p]));
  const segments: string[] = [];
  for (const segment of target.path.split("/")) {
    let templated = false;
    const filled = segment.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
      const parameter = byName.get(name);
      if (!parameter) return whole;
      templated = true;
      return pathValue(parameter, input[parameter.property]);
    });
    if (templated && isDotSegment(filled)) {
      return {
        error: "InvalidRequest",
        message: `a value would make the URL path segment '${segment}' read '${filled}', which would change the upstream path; '.' and '..' are refused there`,
      };
    }
    segments.push(filled);
  }
  return segments.join("/");
}

/** A path parameter in its style (`simple` by default, `label`, `matrix`), percent-encoded. */
function pathValue(parameter: ParameterTarget, value: unknown): string {
  if (value === undefined || value === null) return "";
  if (parameter.json) return encodeURIComponent(JSON.stringify(value));
  const { explode } = parameter;
  switch (parameter.style) {
    case "label":
      return `.${items(value, explode).join(explode ? "." : ",")}`;
    case "matrix": {
      const name = encodeURIComponent(parameter.name);
      if (Array.isArray(value) && explode)
        return items(value, true)
          .map((item) => `;${name}=${item}`)
          .join("");
      if (isPlainObject(value) && explode)
        return items(value, true)
          .map((pair) => `;${pair}`)
          .join("");
      return `;${name}=${items(value, explode).join(",")}`;
    }
    default:
      return items(value, explode).join(",");
  }
}

/**
 * A value's encoded parts: an array's items, an object's `key=value` pairs (exploded) or keys and
 * values in turn, a scalar itself.
 */
function items(value: unknown, explode: boolean): string[] {
  const encode = (item: unknown) => encodeURIComponent(text(item));
  if (Array.isArray(value)) return value.map(encode);
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    return explode
      ? entries.map(([key, item]) => `${encode(key)}=${encode(item)}`)
      : entries.flatMap(([key, item]) => [encode(key), encode(item)]);
  }
  return [encode(value)];
}

/** A header value in `simple` style: arrays and objects comma-joined. */
function simple(value: unknown, explode: boolean): string {
  if (Array.isArray(value)) return value.map(text).join(",");
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    return explode
      ? entries.map(([key, item]) => `${key}=${text(item)}`).join(",")
      : entries.flatMap(([key, item]) => [key, text(item)]).join(",");
  }
  return text(value);
}

/** A query parameter in its style: `form` (arrays repeated unless `explode: false`), delimited, `deepObject`. */
function appendQuery(params: URLSearchParams, parameter: ParameterTarget, value: unknown): void {
  const { name, explode } = parameter;
  if (parameter.json) {
    params.append(name, JSON.stringify(value));
    return;
  }
  if (Array.isArray(value)) {
    const texts = value.filter((item) => item !== null && item !== undefined).map(text);
    const delimiter = DELIMITERS.get(parameter.style) ?? ",";
    if (explode) for (const text of texts) params.append(name, text);
    else params.append(name, texts.join(delimiter));
    return;
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, item]) => item !== null && item !== undefined);
    if (parameter.style === "deepObject") {
      for (const [key, item] of entries) params.append(`${name}[${key}]`, text(item));
    } else if (explode) {
      for (const [key, item] of entries) params.append(key, text(item));
    } else {
      params.append(name, entries.flatMap(([key, item]) => [key, text(item)]).join(","));
    }
    return;
  }
  params.append(name, text(value));
}

/** A scalar as it stands in a path, query or header; a nested array or object (no style covers one) as JSON. */
function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A form body (`application/x-www-form-urlencoded`) from the body's top-level properties: arrays
 * repeat their key, objects travel as JSON text, null and undefined are left out.
 */
function formBody(body: unknown): string {
  const params = new URLSearchParams();
  if (typeof body !== "object" || body === null) return params.toString();
  for (const [name, value] of Object.entries(body)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === undefined || item === null) continue;
      params.append(name, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
  return params.toString();
}
