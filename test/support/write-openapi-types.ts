import { writeFileSync } from "node:fs";
import { testApp } from "./app";
import { apiDocument, OPENAPI_TYPES_FILE, openApiTypesSource } from "./openapi";

// `npm run openapi:types`: regenerates the typed client's types after a route or schema changed.
const { app } = await testApp();
writeFileSync(OPENAPI_TYPES_FILE, await openApiTypesSource(await apiDocument(app)));
console.log(`wrote ${OPENAPI_TYPES_FILE}`);
