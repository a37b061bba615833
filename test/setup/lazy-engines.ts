import { loadLazyEngines } from "@vance/core";

// Ajv, RE2 and acorn load lazily (an `import()` each, chunks of their own in the function
// bundles); the composition roots await them before serving, and tests that call the parsers,
// tool types and validators directly get them here, before any test runs.
await loadLazyEngines();
