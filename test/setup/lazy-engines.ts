// The lazy-engines module alone, not `@vance/core`'s index: every test file's setup imported
// the whole core (and all it imports) before its first test, most of them to use a part of it.
import { loadLazyEngines } from "../../packages/core/src/tool-types/lazy-engines";

// Ajv, RE2 and acorn load lazily (an `import()` each, chunks of their own in the function
// bundles); the composition roots await them before serving, and tests that call the parsers,
// tool types and validators directly get them here, before any test runs.
await loadLazyEngines();
