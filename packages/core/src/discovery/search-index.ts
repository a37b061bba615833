import {
  ACTIONS,
  actionOfOperation,
  actionsOfTerm,
  isQuantifier,
  rewritePhrases,
  type SearchAction,
  searchTerms,
  splitWords,
  synonymsOfTerm,
} from "./search-text";

/** A tool as search reads it: what its documents say, field by field. */
export interface SearchDocument {
  readonly name: string;
  /** The first paragraph of its description (an OpenAPI operation's `summary`). */
  readonly summary: string;
  /** The rest of its description. */
  readonly details: string;
  /** Its family inside its pack (an OpenAPI tag). */
  readonly family?: string;
  /** Its pack's name, and the pack's hint line and its source's title. */
  readonly pack?: string;
  readonly packText?: string;
  /** An OpenAPI operation's method and path. */
  readonly method?: string;
  readonly path?: string;
  /** Top-level parameter names (and the body's). */
  readonly parameters: readonly string[];
}

/**
 * A built index as plain data: it is built on a worker thread and crosses to the serving thread
 * by structured clone. Terms are sorted (looked up by binary search, so loading it builds
 * nothing); each term's postings are ordered by impact, best first.
 */
export interface SearchIndexData {
  readonly names: readonly string[];
  readonly terms: readonly string[];
  /** Per term: its inverse document frequency. */
  readonly idf: Float32Array;
  /** Term `t`'s postings are `[offsets[t], offsets[t + 1])`. */
  readonly offsets: Uint32Array;
  readonly postings: Uint32Array;
  /** Per posting: the term's BM25F contribution to the document's score. */
  readonly impacts: Float32Array;
  /** Per document: what it does (`ACTIONS` index, 0 for unknown). */
  readonly actions: Uint8Array;
  /** Per document: a hash of its summary's terms, for the exact match. */
  readonly summaries: Uint32Array;
  /** Per document: the term of what it acts on (its path's last fixed word, else its name's last word), or -1. */
  readonly resources: Int32Array;
  /** Pack names, sorted; per document its pack's index or -1. */
  readonly packs: readonly string[];
  readonly packOf: Int32Array;
  /**
   * Per document: the terms of its own name that name a thing (not an action, not `id`),
   * `nameTerms[nameOffsets[d], nameOffsets[d + 1])`: how much of them a query covers says how
   * squarely the tool is what was asked for (`conversations_archive` against
   * `admin_conversations_archive`).
   */
  readonly nameOffsets: Uint32Array;
  readonly nameTerms: Uint32Array;
}

/**
 * How much a word counts by where it stands. The name and the summary say what a tool does; the
 * path says what it acts on; tags, the pack and parameters what it is about; the long
 * description mostly other things.
 */
const FIELDS = [
  { name: "name", weight: 2.5, b: 0.75 },
  { name: "summary", weight: 3, b: 0.75 },
  { name: "path", weight: 1.5, b: 0.5 },
  { name: "family", weight: 1, b: 0.3 },
  { name: "packText", weight: 0.3, b: 0 },
  { name: "parameter", weight: 0.5, b: 0.3 },
  { name: "details", weight: 0.4, b: 0.5 },
] as const;
/** Each field's position in `FIELDS`. */
const FIELD = Object.fromEntries(FIELDS.map((field, index) => [field.name, index])) as Record<
  (typeof FIELDS)[number]["name"],
  number
>;
/** Words of the long description read: past them it is mostly examples and links. */
const MAX_DETAIL_WORDS = 80;

/** BM25's term-frequency saturation (each field's length normalisation is its `b`). */
const K1 = 1.2;

/** Characters of a query that are read; the rest is ignored. */
const MAX_QUERY_CHARS = 500;
/** Concepts (query words with their synonyms) read per query. */
const MAX_CONCEPTS = 16;
/**
 * Postings read per term, best first: a search costs at most this many steps per term whatever
 * the catalog's size; a term in more documents than this says little about any one of them.
 */
const MAX_POSTINGS_PER_TERM = 4_096;
/** A synonym's weight against the word the query used. */
const SYNONYM_WEIGHT = 0.7;
/** The score of a document whose action is one the query asks for, of one that reads when the query reads another way, and of one doing another thing. */
const ACTION_MATCH = 1.35;
const ACTION_NEAR = 1;
const ACTION_MISMATCH = 0.75;
/** The score of a document acting on a thing the query names (`DELETE …/projects/{id}` for "delete a project"). */
const RESOURCE_MATCH = 1.3;
/** A word naming an action counts this much as a word: what the document does is compared apart. */
const ACTION_WORD_WEIGHT = 0.4;
/** The score of a tool of a pack the query names, and of one of another pack. */
const NAMED_PACK = 1.5;
const OTHER_PACK = 0.35;
/** How much the share of a tool's own name the query covers counts: × (1 − NAME_FIT + NAME_FIT × share). */
const NAME_FIT = 0.3;
/** The score of a tool whose summary is the query, word for word. */
const EXACT_SUMMARY = 2;

/** Builds the index of `documents` (pure; linear in their text): run it off the serving thread. */
export function buildSearchIndex(documents: readonly SearchDocument[]): SearchIndexData {
  const termIds = new Map<string, number>();
  const termNames: string[] = [];
  const packIds = new Map<string, number>();
  // Per document, per field: its terms' counts and its length (BM25F normalises each field by
  // its own average length, so a long description cannot drown a short name).
  const perDocument: Map<number, number>[][] = [];
  const fieldLengths = FIELDS.map(() => 0);
  const actions = new Uint8Array(documents.length);
  const summaries = new Uint32Array(documents.length);
  const packOfRaw = new Int32Array(documents.length).fill(-1);
  const resourceTerms: (string | undefined)[] = [];
  const nameTermIds: number[][] = [];

  for (const [index, doc] of documents.entries()) {
    const fields = FIELDS.map(() => new Map<number, number>());
    const add = (field: number, words: readonly string[]) => {
      const terms = fields[field]!;
      for (const word of words) {
        let id = termIds.get(word);
        if (id === undefined) {
          id = termNames.length;
          termIds.set(word, id);
          termNames.push(word);
        }
        terms.set(id, (terms.get(id) ?? 0) + 1);
      }
      fieldLengths[field]! += words.length;
    };
    const pack = doc.pack;
    const ownName = pack && doc.name.startsWith(`${pack}__`) ? doc.name.slice(pack.length + 2) : doc.name;
    const nameWords = searchTerms(ownName);
    add(FIELD.name, nameWords);
    nameTermIds.push(
      [...new Set(nameWords)]
        .filter((term) => term !== "id" && actionsOfTerm(term).length === 0)
        .map((term) => termIds.get(term)!),
    );
    const summary = searchTerms(doc.summary);
    add(FIELD.summary, summary);
    add(FIELD.details, searchTerms(doc.details).slice(0, MAX_DETAIL_WORDS));
    if (doc.family) add(FIELD.family, searchTerms(doc.family));
    if (doc.path) add(FIELD.path, searchTerms(staticPath(doc.path)));
    if (doc.packText) add(FIELD.packText, searchTerms(doc.packText));
    add(
      FIELD.parameter,
      doc.parameters.flatMap((parameter) => searchTerms(parameter)),
    );
    perDocument.push(fields);
    actions[index] = ACTIONS.indexOf(actionOfDocument(doc, ownName, summary));
    summaries[index] = hashTerms(summary);
    resourceTerms.push(resourceOf(doc, ownName));
    if (pack) {
      let id = packIds.get(pack);
      if (id === undefined) {
        id = packIds.size;
        packIds.set(pack, id);
      }
      packOfRaw[index] = id;
    }
  }

  // Terms and packs sorted, so that the serving thread looks them up without building a map.
  const order = termNames.map((_, id) => id).sort((a, b) => compare(termNames[a]!, termNames[b]!));
  const rank = new Uint32Array(termNames.length);
  for (const [position, id] of order.entries()) rank[id] = position;
  const packNames = [...packIds.keys()].sort(compare);
  const packRank = [...packIds.keys()].map((name) => packNames.indexOf(name));
  const packOf = packOfRaw.map((id) => (id < 0 ? -1 : packRank[id]!));

  const count = documents.length;
  const averageLengths = fieldLengths.map((length) => Math.max(1, length / Math.max(1, count)));
  // Per document: each term's BM25F frequency, its fields' counts weighted and length-normalised.
  const weighted: Map<number, number>[] = perDocument.map((fields) => {
    const terms = new Map<number, number>();
    for (const [field, counts] of fields.entries()) {
      let length = 0;
      for (const tf of counts.values()) length += tf;
      const { weight, b } = FIELDS[field]!;
      const norm = 1 - b + (b * length) / averageLengths[field]!;
      for (const [id, tf] of counts) terms.set(id, (terms.get(id) ?? 0) + (weight * tf) / norm);
    }
    return terms;
  });
  const frequency = new Uint32Array(termNames.length);
  for (const terms of weighted) for (const id of terms.keys()) frequency[rank[id]!]! += 1;
  const idf = new Float32Array(termNames.length);
  for (let t = 0; t < idf.length; t++) {
    idf[t] = Math.log(1 + (count - frequency[t]! + 0.5) / (frequency[t]! + 0.5));
  }
  const offsets = new Uint32Array(termNames.length + 1);
  for (let t = 0; t < frequency.length; t++) offsets[t + 1] = offsets[t]! + frequency[t]!;
  const postings = new Uint32Array(offsets[termNames.length]!);
  const impacts = new Float32Array(postings.length);
  const filled = new Uint32Array(termNames.length);
  for (const [doc, terms] of weighted.entries()) {
    for (const [id, tf] of terms) {
      const t = rank[id]!;
      const at = offsets[t]! + filled[t]!;
      filled[t]! += 1;
      postings[at] = doc;
      impacts[at] = (idf[t]! * (tf * (K1 + 1))) / (tf + K1);
    }
  }
  for (let t = 0; t < termNames.length; t++) sortByImpact(postings, impacts, offsets[t]!, offsets[t + 1]!);

  const nameOffsets = new Uint32Array(documents.length + 1);
  for (const [index, ids] of nameTermIds.entries()) nameOffsets[index + 1] = nameOffsets[index]! + ids.length;
  const nameTerms = new Uint32Array(nameOffsets[documents.length]!);
  for (const [index, ids] of nameTermIds.entries()) {
    for (const [at, id] of ids.entries()) nameTerms[nameOffsets[index]! + at] = rank[id]!;
  }
  const resources = new Int32Array(documents.length).fill(-1);
  for (const [index, term] of resourceTerms.entries()) {
    const id = term === undefined ? undefined : termIds.get(term);
    if (id !== undefined) resources[index] = rank[id]!;
  }
  return {
    names: documents.map((doc) => doc.name),
    terms: order.map((id) => termNames[id]!),
    idf,
    offsets,
    postings,
    impacts,
    actions,
    summaries,
    resources,
    packs: packNames,
    packOf,
    nameOffsets,
    nameTerms,
  };
}

/** One ranked result. */
export interface SearchHit {
  readonly name: string;
  readonly score: number;
}

/** A query word with its synonyms, and the index's terms for them. */
interface Concept {
  readonly terms: readonly { readonly term: number; readonly weight: number }[];
  /** What covering it is worth; 0 for a word that names an action (compared apart). */
  readonly idf: number;
}

/**
 * `SearchIndex`: ranks an index's tools for a query. A search reads only the postings of the
 * query's terms (at most `MAX_POSTINGS_PER_TERM` each) and scores the tools they reach: BM25F
 * over the weighted fields, times how much of the query a tool covers, what it does against what
 * the query asks for (create, get, list, update, delete, search), the pack the query names, and
 * a summary that is the query word for word.
 */
export class SearchIndex {
  /** Scratch space of one search (a search runs to its end before the next one starts). */
  private readonly scores: Float64Array;
  private readonly masks: Uint32Array;

  constructor(readonly data: SearchIndexData) {
    this.scores = new Float64Array(data.names.length);
    this.masks = new Uint32Array(data.names.length);
  }

  /** Bytes the index holds, as a cache budgets it. */
  get bytes(): number {
    const { data } = this;
    let chars = 0;
    for (const name of data.names) chars += name.length;
    for (const term of data.terms) chars += term.length;
    return (
      2 * chars +
      16 * (data.names.length + data.terms.length) +
      data.idf.byteLength +
      data.offsets.byteLength +
      data.postings.byteLength +
      data.impacts.byteLength +
      data.actions.byteLength +
      data.summaries.byteLength +
      data.resources.byteLength +
      data.packOf.byteLength +
      data.nameOffsets.byteLength +
      data.nameTerms.byteLength +
      this.scores.byteLength +
      this.masks.byteLength
    );
  }

  /** The tools this index holds. */
  get size(): number {
    return this.data.names.length;
  }

  /**
   * The best `limit` tools for `query` that `allowed` accepts, best first (ties by name); none
   * when no word of the query matches.
   */
  search(query: string, limit: number, allowed: (name: string) => boolean = () => true): SearchHit[] {
    if (limit < 1) return [];
    const { data, scores, masks } = this;
    const words = splitWords(rewritePhrases(query.slice(0, MAX_QUERY_CHARS)));
    const namedPacks = new Set<number>();
    const queryActions = new Set<SearchAction>();
    const concepts: Concept[] = [];
    const seen = new Set<string>();
    let plural = false;
    // The first verb names what the query wants done; a later one is a thing ("remove a
    // subscriber from a list"), and a past form a state ("who registered").
    let verbSeen = false;
    for (let index = 0; index < words.length && concepts.length < MAX_CONCEPTS; index++) {
      const word = words[index]!;
      const pack =
        this.pack(word) ?? (index + 1 < words.length ? this.pack(word + words[index + 1]) : undefined);
      if (pack !== undefined) {
        namedPacks.add(pack);
        if (this.pack(word) === undefined) index++;
        continue;
      }
      const terms = searchTerms(word);
      if (terms.length === 0) continue;
      const term = terms[0]!;
      if (seen.has(term)) continue;
      seen.add(term);
      if (isQuantifier(word)) {
        queryActions.add("list");
        continue;
      }
      const named = word.endsWith("ed") ? [] : actionsOfTerm(term);
      // Once the verb is read, only a word of the same action stays one ("create a new …").
      const actions = verbSeen ? named.filter((action) => queryActions.has(action)) : named;
      if (actions.length > 0) verbSeen = true;
      for (const action of actions) queryActions.add(action);
      if (actions.length === 0 && isPlural(word)) plural = true;
      const weight = actions.length > 0 ? ACTION_WORD_WEIGHT : 1;
      const found: { term: number; weight: number }[] = [];
      let idf = 0;
      const own = this.term(term);
      if (own !== undefined) {
        found.push({ term: own, weight });
        idf = data.idf[own]!;
      }
      for (const synonym of synonymsOfTerm(term)) {
        const id = this.term(synonym);
        if (id === undefined || found.some((entry) => entry.term === id)) continue;
        found.push({ term: id, weight: weight * SYNONYM_WEIGHT });
        idf = Math.max(idf, data.idf[id]! * SYNONYM_WEIGHT);
      }
      if (found.length > 0) concepts.push({ terms: found, idf: actions.length > 0 ? 0 : idf });
    }
    if (concepts.length === 0) return [];
    // "show all", "see the recent runs": a word of many makes the looking a listing.
    if (plural && (queryActions.size === 0 || queryActions.has("get"))) queryActions.add("list");
    if (queryActions.has("list")) queryActions.delete("get");
    const queryTerms = new Set<number>();
    for (const concept of concepts) for (const { term } of concept.terms) queryTerms.add(term);
    const resourceTerms = new Set<number>();
    for (const concept of concepts)
      if (concept.idf > 0) for (const { term } of concept.terms) resourceTerms.add(term);

    const touched: number[] = [];
    for (const [index, concept] of concepts.entries()) {
      const bit = 1 << index;
      for (const { term, weight } of concept.terms) {
        const end = Math.min(data.offsets[term + 1]!, data.offsets[term]! + MAX_POSTINGS_PER_TERM);
        for (let at = data.offsets[term]!; at < end; at++) {
          const doc = data.postings[at]!;
          if (masks[doc] === 0) touched.push(doc);
          // Of a word and its synonyms in one tool, only the first found counts: the word itself.
          if ((masks[doc]! & bit) !== 0) continue;
          scores[doc]! += data.impacts[at]! * weight;
          masks[doc]! |= bit;
        }
      }
    }

    const totalIdf = concepts.reduce((sum, concept) => sum + concept.idf, 0);
    const reads = (action: SearchAction) => action === "get" || action === "list" || action === "search";
    const asksToRead = [...queryActions].some(reads);
    const summary = hashTerms(searchTerms(query.slice(0, MAX_QUERY_CHARS)));
    const hits: SearchHit[] = [];
    for (const doc of touched) {
      let score = scores[doc]!;
      const mask = masks[doc]!;
      scores[doc] = 0;
      masks[doc] = 0;
      const name = data.names[doc]!;
      let covered = 0;
      for (const [index, concept] of concepts.entries()) if (mask & (1 << index)) covered += concept.idf;
      const coverage = totalIdf > 0 ? covered / totalIdf : 1;
      score *= 0.25 + 0.75 * coverage * coverage;
      const action = ACTIONS[data.actions[doc]!];
      if (queryActions.size > 0 && action) {
        score *= queryActions.has(action)
          ? ACTION_MATCH
          : asksToRead && reads(action)
            ? ACTION_NEAR
            : ACTION_MISMATCH;
      }
      if (resourceTerms.has(data.resources[doc]!)) score *= RESOURCE_MATCH;
      if (namedPacks.size > 0) score *= namedPacks.has(data.packOf[doc]!) ? NAMED_PACK : OTHER_PACK;
      if (data.summaries[doc] === summary) score *= EXACT_SUMMARY;
      const from = data.nameOffsets[doc]!;
      const to = data.nameOffsets[doc + 1]!;
      if (to > from) {
        let named = 0;
        for (let at = from; at < to; at++) if (queryTerms.has(data.nameTerms[at]!)) named++;
        score *= 1 - NAME_FIT + (NAME_FIT * named) / (to - from);
      }
      const hit = { name, score };
      // Whether the caller may use it is asked only of a tool that would be answered: a search
      // reaches thousands of tools, and a process's allow set may hold 17,000.
      if (hits.length === limit && !ranksBefore(hit, hits[limit - 1]!)) continue;
      if (!allowed(name)) continue;
      keepBest(hits, hit, limit);
    }
    return hits;
  }

  private term(term: string): number | undefined {
    return find(this.data.terms, term);
  }

  private pack(word: string): number | undefined {
    return find(this.data.packs, word);
  }
}

/** What a document does: by its method and path (REST says it best), else its summary's or name's leading verb. */
function actionOfDocument(
  doc: SearchDocument,
  ownName: string,
  summary: readonly string[],
): SearchAction | null {
  const rest = doc.method && doc.path ? actionOfOperation(doc.method, doc.path) : null;
  if (rest) return rest;
  for (const words of [summary, searchTerms(ownName)]) {
    const first = words[0];
    if (first === undefined) continue;
    const actions = actionsOfTerm(first);
    if (actions.length === 1) return actions[0]!;
  }
  return null;
}

/** What a document acts on: its path's last fixed word (`/repos/{o}/{r}/pulls/{n}` → pull), else its name's last word. */
function resourceOf(doc: SearchDocument, ownName: string): string | undefined {
  if (doc.path) {
    const words = searchTerms(staticPath(doc.path));
    const fixed = doc.path.split("/").filter((segment) => segment !== "" && !segment.startsWith("{"));
    const last = fixed.at(-1);
    // The last word that names no action: `/conversations.list` acts on conversations.
    const things =
      last === undefined ? [] : searchTerms(last).filter((term) => actionsOfTerm(term).length === 0);
    if (things.length > 0) return things.at(-1);
    if (words.length > 0) return words.at(-1);
  }
  return searchTerms(ownName).at(-1);
}

function isPlural(word: string): boolean {
  return word.length > 3 && word.endsWith("s") && !/(ss|us|is)$/.test(word);
}

/** A path's fixed words: its segments without the `{parameters}`. */
function staticPath(path: string): string {
  // A scan, not /\{[^}]*\}/g: that regex is quadratic on a path of many unclosed braces.
  let out = "";
  let i = 0;
  while (i < path.length) {
    if (path[i] === "{") {
      const close = path.indexOf("}", i + 1);
      if (close < 0) return out + path.slice(i);
      out += " ";
      i = close + 1;
    } else {
      out += path[i];
      i++;
    }
  }
  return out;
}

/** Best first, ties by name. */
function ranksBefore(a: SearchHit, b: SearchHit): boolean {
  return a.score > b.score || (a.score === b.score && a.name < b.name);
}

/**
 * Keeps `hits` the best `limit` seen so far, in order: a search reaches thousands of tools and
 * answers a handful, so it never sorts them all.
 */
function keepBest(hits: SearchHit[], hit: SearchHit, limit: number): void {
  if (hits.length === limit && !ranksBefore(hit, hits[limit - 1]!)) return;
  let at = hits.length === limit ? limit - 1 : hits.length;
  hits[at] = hit;
  while (at > 0 && ranksBefore(hit, hits[at - 1]!)) {
    hits[at] = hits[at - 1]!;
    hits[at - 1] = hit;
    at--;
  }
}

/** FNV-1a over the terms, for comparing a query with a summary. */
function hashTerms(terms: readonly string[]): number {
  let hash = 0x811c9dc5;
  for (const term of terms) {
    for (let i = 0; i < term.length; i++) {
      hash ^= term.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    hash ^= 32;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function find(sorted: readonly string[], key: string): number | undefined {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = sorted[middle]!;
    if (value === key) return middle;
    if (value < key) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts postings `[from, to)` by impact, best first (insertion sort for short runs, else via an index). */
function sortByImpact(postings: Uint32Array, impacts: Float32Array, from: number, to: number): void {
  const length = to - from;
  if (length < 2) return;
  const order = Array.from({ length }, (_, i) => from + i).sort(
    (a, b) => impacts[b]! - impacts[a]! || postings[a]! - postings[b]!,
  );
  const docs = order.map((at) => postings[at]!);
  const values = order.map((at) => impacts[at]!);
  postings.set(docs, from);
  impacts.set(values, from);
}
