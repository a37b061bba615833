/** A JSON Schema object as handed to LLMs and clients (draft 2020-12 / draft-07 compatible). */
export type JsonSchema = { readonly [key: string]: unknown };
