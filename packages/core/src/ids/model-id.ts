import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** Model instances name folders of the catalog (`model/{instance}/…`), spelled like tenant ids. */
export const INSTANCE_PATTERN = ID_PATTERN;
/** Model slugs: one plain path segment (dots allowed: `gpt-4.1`); `_provider` can never be one. */
export const SLUG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Why `model` is not an id the model catalog can resolve (`instance/slug`), or `null`. */
export function modelIdProblem(model: string): string | null {
  const slash = model.indexOf("/");
  if (slash < 0) return "a model id is instance/slug";
  if (!INSTANCE_PATTERN.test(model.slice(0, slash))) return `the instance must be ${ID_RULE}`;
  if (!SLUG_PATTERN.test(model.slice(slash + 1)))
    return "the slug must be a plain name: letters, digits, '.', '_' and '-', at most 128 characters";
  return null;
}

/** A model id, `instance/slug`: the catalog's own rule, so every id accepted anywhere can be resolved. */
export const ModelIdSchema = ruleSchema("model id", modelIdProblem);
