import { loadYamlParser } from "../config/yaml";
import { loadJsonSchemaEngine } from "../validation/json-schema-validator";
import { loadScriptParser } from "./script-syntax";

/**
 * Loads what checking documents and values needs and no cold start should pay for before its
 * first such request: Ajv and RE2 (JSON Schemas), acorn (script syntax), the YAML parser (every
 * document). Each is an `import()`, a chunk of its own in the function bundles, loaded once per
 * process. The functions that use them are synchronous and throw before this has answered: every
 * composition root awaits it before serving (the Lambda entry before the first event that is not
 * a health check).
 */
export async function loadLazyEngines(): Promise<void> {
  await Promise.all([loadJsonSchemaEngine(), loadScriptParser(), loadYamlParser()]);
}
