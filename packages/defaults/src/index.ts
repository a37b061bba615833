import { fileURLToPath } from "node:url";

/**
 * The directory holding the bundled documents (`server-tools/`, `documents/`, `catalog/`).
 * In a Lambda bundle the files are copied beside the handler and `VANCE_DEFAULTS_DIR` points there.
 */
export const DEFAULTS_DIR = fileURLToPath(new URL("..", import.meta.url));
