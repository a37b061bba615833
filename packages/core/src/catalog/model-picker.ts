import { compareStrings } from "../order";
import type { LlmChoice, LlmEndpoint } from "../ports/tool-runtime";
import type { PlatformSecrets } from "../secrets/secret-service";
import { type CompiledCatalog, type CompiledProvider, parseModelId } from "./model-catalog";
import type { CatalogSnapshot } from "./model-catalog-service";

export interface ModelPickerOptions {
  /** Platform secrets (deploy-time): where a provider's `apiKey: ${secret:NAME}` is read. */
  readonly platformSecret: PlatformSecrets;
  /** The instance whose models `modelSize` picks from, for a tenant (a setting); undefined: none. */
  readonly defaultInstance: (tenant: string) => string | undefined;
}

type Failure = { readonly error: string; readonly message: string };

/**
 * Picks the model a `prompt_template` call goes to (spec §3): the named catalog model, else the
 * first model (by slug) of the asked size in the tenant's default instance; with the provider's
 * `baseUrl`, `wireType` and key. The key comes from a platform secret and only ever reaches the
 * request; failures say what is missing without naming the secret.
 */
export class ModelPicker {
  constructor(private readonly options: ModelPickerOptions) {}

  /** `models`: the invocation's request's snapshot of the model catalog (`ToolSnapshot.catalog`). */
  async pick(tenant: string, choice: LlmChoice, models: CatalogSnapshot): Promise<LlmEndpoint | Failure> {
    const catalog = await models.catalog();
    const target = this.#target(catalog, tenant, choice);
    if ("error" in target) return target;
    const { instance, slug, provider } = target;
    if (provider.baseUrl === undefined || provider.wireType === undefined) {
      return {
        error: "ModelNotConfigured",
        message: `the model catalog's instance '${instance}' has no ${provider.baseUrl === undefined ? "baseUrl" : "wireType"}; a platform admin sets it in model/${instance}/_provider.yaml`,
      };
    }
    let apiKey: string | undefined;
    if (provider.apiKeySecret !== undefined) {
      apiKey = this.options.platformSecret(provider.apiKeySecret);
      if (apiKey === undefined) {
        return {
          error: "ModelNotConfigured",
          message: `the key for instance '${instance}' is not set on this deployment; ask the platform operator`,
        };
      }
    }
    return {
      model: `${instance}/${slug}`,
      slug,
      wireType: provider.wireType,
      baseUrl: provider.baseUrl,
      ...(apiKey === undefined ? {} : { apiKey }),
    };
  }

  #target(
    catalog: CompiledCatalog,
    tenant: string,
    choice: LlmChoice,
  ): { instance: string; slug: string; provider: CompiledProvider } | Failure {
    if (choice.model !== undefined) {
      const { instance, slug } = parseModelId(choice.model);
      const provider = providerOf(catalog, instance);
      return provider
        ? { instance, slug, provider }
        : { error: "ModelNotFound", message: `the model catalog has no instance '${instance}'` };
    }
    if (choice.size === undefined) {
      return { error: "ModelNotFound", message: "the tool names neither a model nor a modelSize" };
    }
    const instance = this.options.defaultInstance(tenant);
    const provider = instance === undefined ? undefined : providerOf(catalog, instance);
    if (instance === undefined || !provider) {
      return {
        error: "ModelNotFound",
        message: `modelSize needs a default model instance in the catalog${instance === undefined ? "" : ` ('${instance}' is not in it)`}; name a model instead`,
      };
    }
    const slug = Object.keys(provider.models)
      .sort(compareStrings)
      .find((candidate) => provider.models[candidate]?.size === choice.size);
    return slug === undefined
      ? {
          error: "ModelNotFound",
          message: `no model of size '${choice.size}' in the default instance '${instance}'; name a model instead`,
        }
      : { instance, slug, provider };
  }
}

function providerOf(catalog: CompiledCatalog, instance: string): CompiledProvider | undefined {
  return Object.hasOwn(catalog.providers, instance) ? catalog.providers[instance] : undefined;
}
