import type { ServiceHost } from "./engine-host";

/**
 * Makes `instance` an endpoint of the service's model catalog, as a platform admin does with
 * `PUT /v1/models/{instance}/_provider`: the service learns tool limits only for catalog
 * endpoints (`POST /v1/models/observed-limits` answers 400 `invalid_model` for any other).
 * The document names no `maxTools`, so the limit stays unknown until a rejection teaches it.
 * An instance the catalog already knows (a bundled one, e.g. `anthropic`) is left as it is.
 */
export async function ensureCatalogEndpoint(
  service: ServiceHost,
  instance: string,
  wireType: "openai" | "anthropic",
): Promise<void> {
  const authorization = `Bearer ${service.token}`;
  const listed = await fetch(`${service.base}/v1/models`, { headers: { authorization } });
  if (!listed.ok) throw new Error(`GET /v1/models answered ${listed.status}: ${await listed.text()}`);
  const { providers } = (await listed.json()) as { providers: { instance: string }[] };
  if (providers.some((provider) => provider.instance === instance)) return;
  const written = await fetch(`${service.base}/v1/models/${instance}/_provider`, {
    method: "PUT",
    headers: { authorization, "content-type": "application/yaml" },
    body: `wireType: ${wireType}\n`,
  });
  if (!written.ok) {
    throw new Error(
      `PUT /v1/models/${instance}/_provider answered ${written.status}: ${await written.text()}`,
    );
  }
}
