/** The service version: reported by health and OpenAPI, and part of a compiled index's fingerprint. */
export const VERSION = "0.1.0";
