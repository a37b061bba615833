import type { SurfaceTool } from "../surface/classify";

/** Results `tool_search` answers at most per call. */
export const MAX_SEARCH_RESULTS = 25;
/** Results when the call names no `limit`. */
export const DEFAULT_SEARCH_RESULTS = 5;
/** Characters of a query that are read; the rest is ignored. */
const MAX_QUERY_CHARS = 500;

/** BM25's usual constants: term-frequency saturation and length normalisation. */
const K1 = 1.2;
const B = 0.75;

/**
 * How much a term counts by where it stands: a name says what a tool does, its family (an
 * OpenAPI tag) what it is about, its parameters what it takes, its description the rest.
 */
const FIELD_WEIGHTS = { name: 3, family: 2, parameter: 1, description: 1 } as const;

/** Words that say nothing about which tool is meant. */
const STOP_WORDS = new Set(
  "a an and are as at be by for from get how i in into is it me my of on or please the to use want with".split(
    " ",
  ),
);

/** One ranked result. */
export interface ToolSearchHit {
  readonly name: string;
  readonly score: number;
}

interface Document {
  readonly name: string;
  /** Weighted term frequencies. */
  readonly terms: ReadonlyMap<string, number>;
  readonly length: number;
}

/**
 * `ToolSearchIndex`: BM25 over the tools a process may call — their names, families, top-level
 * parameter names and descriptions, split into words and lightly stemmed. Built once per tool
 * map (the surface keeps the same map while the listing holds) and linear in its text.
 */
export class ToolSearchIndex {
  private readonly documents: readonly Document[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(tools: Iterable<SurfaceTool>) {
    const documents: Document[] = [];
    for (const tool of tools) {
      const terms = new Map<string, number>();
      let length = 0;
      const add = (text: string, weight: number) => {
        for (const term of searchTerms(text)) {
          terms.set(term, (terms.get(term) ?? 0) + weight);
          length += weight;
        }
      };
      add(tool.name, FIELD_WEIGHTS.name);
      if (tool.family) add(tool.family, FIELD_WEIGHTS.family);
      for (const parameter of parameterNames(tool)) add(parameter, FIELD_WEIGHTS.parameter);
      add(tool.description, FIELD_WEIGHTS.description);
      for (const term of terms.keys()) {
        this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
      }
      documents.push({ name: tool.name, terms, length });
    }
    this.documents = documents;
    this.averageLength = documents.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, documents.length);
  }

  /** The best `limit` tools for `query`, best first (ties by name); none when no word matches. */
  search(query: string, limit: number): ToolSearchHit[] {
    const terms = [...new Set(searchTerms(query.slice(0, MAX_QUERY_CHARS)))];
    const count = this.documents.length;
    const weights = terms.map((term) => {
      const frequency = this.documentFrequency.get(term) ?? 0;
      return Math.log(1 + (count - frequency + 0.5) / (frequency + 0.5));
    });
    const hits: ToolSearchHit[] = [];
    for (const doc of this.documents) {
      let score = 0;
      for (let index = 0; index < terms.length; index++) {
        const tf = doc.terms.get(terms[index]!);
        if (tf === undefined) continue;
        const norm = K1 * (1 - B + (B * doc.length) / this.averageLength);
        score += weights[index]! * ((tf * (K1 + 1)) / (tf + norm));
      }
      if (score > 0) hits.push({ name: doc.name, score });
    }
    hits.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return hits.slice(0, limit);
  }
}

/** The top-level property names of a tool's input schema, and those of its `body`. */
function parameterNames(tool: SurfaceTool): string[] {
  const properties = propertiesOf(tool.inputSchema);
  const names = Object.keys(properties);
  const body = properties.body;
  if (body !== undefined) names.push(...Object.keys(propertiesOf(body)));
  return names;
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  if (typeof schema !== "object" || schema === null) return {};
  const properties = (schema as { properties?: unknown }).properties;
  return typeof properties === "object" && properties !== null && !Array.isArray(properties)
    ? (properties as Record<string, unknown>)
    : {};
}

/**
 * Words of `text` as the index compares them: split at everything but letters and digits and at
 * camelCase humps, lower-cased, stop words dropped, a plural `s` taken off (`issues` → `issue`).
 */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)) {
    if (word === "" || STOP_WORDS.has(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}
