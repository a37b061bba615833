import type { DocumentVersion } from "../../cascade/document-cascade";
import { VanceError } from "../../errors";
import { layerProjectOf } from "../../ids";
import type { CompiledOperationsVersion } from "../../ports/tool-runtime";
import { describeError, exchangeRest, httpError, isHttpSuccess } from "../rest/index";
import type { SourceContext, SourceList, ToolSource } from "../tool-type";
import { MAX_OPENAPI_SPEC_BYTES, type OpenApiParameters, specUrl } from "./parameters";

const SPEC_ACCEPT = "application/yaml, application/json;q=0.9, text/yaml;q=0.8, text/plain;q=0.5, */*;q=0.1";

/**
 * The source of an `openapi` pack: its spec document through the cascade (the key carries the
 * hit's layer and ETag, so a new version is a new list), or its https URL fetched on every load
 * through the guarded fetch (network policy, `timeoutMs`, size cap; the sources' TTL bounds how
 * often). A spec URL is fetched without the pack's `headers`.
 */
export async function openSpec(
  pack: string,
  parameters: OpenApiParameters,
  context: SourceContext,
): Promise<ToolSource> {
  const url = specUrl(parameters.spec);
  if (url) {
    return {
      key: `url ${url.href}`,
      load: async (signal) =>
        list(
          await fetchSpec(url, parameters.timeoutMs, context, signal),
          url.href,
          pack,
          parameters,
          context,
          url,
        ),
    };
  }
  const missing = () =>
    new VanceError(
      "document_not_found",
      `the OpenAPI spec '${parameters.spec}' of pack '${pack}' is not in this project's cascade`,
    );
  // Only the version is needed to know the list is current: the body (13 MB for GitHub's
  // document) is read when it is parsed, once per ETag.
  const found = context.readVersion
    ? { version: await context.readVersion(parameters.spec), hit: null }
    : { version: null, hit: await context.readHit(parameters.spec) };
  const version = found.hit ?? found.version;
  if (!version) throw missing();
  return {
    key: `document ${version.layer} ${version.path} ${version.etag ?? "unversioned"}`,
    // Parsed once per ETag: a new version of the document is a new key.
    versioned: version.etag !== null,
    load: async () => {
      const kept = context.runtime.compiledOperations;
      const keptAs = (etag: string | null, layer: DocumentVersion["layer"]) =>
        kept && etag !== null && layer !== "bundled"
          ? compiledVersion(etag, layer, parameters.spec, pack, parameters, context)
          : null;
      // A list compiled by another instance (or before a cold start) of this very version.
      const wanted = keptAs(version.etag, version.layer);
      const stored = kept && wanted ? await kept.read(wanted) : null;
      if (stored) return stored;
      const hit = found.hit ?? (await context.readHit(parameters.spec));
      if (!hit) throw missing();
      const compiled = await list(hit.body, `'${hit.path}'`, pack, parameters, context);
      const compiledAs = keptAs(hit.etag, hit.layer);
      if (kept && compiledAs)
        await kept.write(compiledAs, { tools: compiled.tools, notes: compiled.notes ?? [] });
      // The parsed list weighs about what its spec does (refs expanded, unused parts dropped).
      return { ...compiled, bytes: 2 * hit.body.length };
    },
  };
}

function compiledVersion(
  etag: string,
  layer: "project" | "tenant",
  path: string,
  pack: string,
  parameters: OpenApiParameters,
  context: SourceContext,
): CompiledOperationsVersion {
  return {
    tenant: context.tenant,
    project: layerProjectOf(layer, context.project)!,
    path,
    etag,
    pack,
    ...(parameters.operations ? { allow: parameters.operations } : {}),
    ...(parameters.tags ? { tags: parameters.tags } : {}),
  };
}

async function list(
  text: string,
  where: string,
  pack: string,
  parameters: OpenApiParameters,
  context: SourceContext,
  url?: URL,
): Promise<SourceList> {
  const compile = context.runtime.openApi;
  if (!compile)
    throw new Error(`the OpenAPI spec ${where} cannot be read: this service has no OpenAPI parser`);
  try {
    const { tools, notes } = await compile({
      text,
      pack,
      tenant: context.tenant,
      ...(url ? { specUrl: url.href } : {}),
      ...(parameters.operations ? { allow: parameters.operations } : {}),
      ...(parameters.tags ? { tags: parameters.tags } : {}),
    });
    return { tools, notes };
  } catch (error) {
    throw new Error(`the OpenAPI spec ${where} is not usable: ${describeError(error)}`);
  }
}

async function fetchSpec(
  url: URL,
  timeoutMs: number,
  context: SourceContext,
  signal: AbortSignal,
): Promise<string> {
  const request = { url, init: { method: "GET", headers: new Headers({ accept: SPEC_ACCEPT }) } };
  const exchanged = await exchangeRest(request, timeoutMs, { ...context, signal });
  if ("error" in exchanged) {
    throw new Error(`fetching the OpenAPI spec ${url.href} failed: ${exchanged.error}: ${exchanged.message}`);
  }
  if (!isHttpSuccess(exchanged.response)) {
    throw new Error(
      `fetching the OpenAPI spec ${url.href} failed: ${httpError(exchanged.response, exchanged.body).message}`,
    );
  }
  // Characters never outnumber UTF-8 bytes; the parser counts the bytes exactly.
  if (exchanged.body.length > MAX_OPENAPI_SPEC_BYTES) {
    throw new Error(`the OpenAPI spec ${url.href} is larger than ${MAX_OPENAPI_SPEC_BYTES} bytes`);
  }
  return exchanged.body;
}
