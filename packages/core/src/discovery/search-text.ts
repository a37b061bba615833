/**
 * Words as `tool_search` compares them: split, folded to a stem, and mapped onto the few
 * meanings people name in many ways (verbs such as open/create/add/new, nouns such as
 * ticket/issue). Pure and deterministic: the index is built from these on a worker thread and
 * the query read with the same functions on the serving thread.
 */

/** Words that say nothing about which tool is meant. */
const STOP_WORDS = new Set(
  (
    "a about am an and are as at be by can could do does for from had has have how i if in into is it its me my of on " +
    "or our please so some such than that the their them then there these this those to up us " +
    "use using via want was we were what when where which who whom whose why will with would you your"
  ).split(" "),
);

/**
 * Words of `text`, lower-cased: split at everything but letters and digits, at camelCase humps
 * and between an acronym and the next word (`getHTTPServer` → get, http, server).
 */
export function splitWords(text: string): string[] {
  // One pass over the characters (a regex for the acronym boundary backtracks quadratically on a
  // long run of capitals, and queries come from callers).
  const words: string[] = [];
  let word = "";
  const flush = () => {
    if (word !== "") words.push(word);
    word = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const lower = c >= "a" && c <= "z";
    const upper = c >= "A" && c <= "Z";
    const digit = c >= "0" && c <= "9";
    if (!lower && !upper && !digit) {
      flush();
      continue;
    }
    if (upper && word !== "") {
      const previous = text[i - 1]!;
      const afterLowerOrDigit = (previous >= "a" && previous <= "z") || (previous >= "0" && previous <= "9");
      const next = text[i + 1];
      const acronymEnds =
        previous >= "A" && previous <= "Z" && next !== undefined && next >= "a" && next <= "z";
      if (afterLowerOrDigit || acronymEnds) flush();
    }
    word += upper ? c.toLowerCase() : c;
  }
  flush();
  return words;
}

/**
 * A light English stemmer (Porter's first steps): plurals, `-ed`, `-ing`, `-ion` and a final
 * silent `e` folded, so that merge, merges, merged and merging meet. Stems only need to agree with
 * one another, not to be words.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /^\d/.test(w)) return w;
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("ss") || w.endsWith("us") || w.endsWith("is")) {
    // address, status, analysis: no plural.
  } else if (w.endsWith("s")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith("ed") && !w.endsWith("eed")) w = undouble(w.slice(0, -2));
  else if (w.length > 6 && w.endsWith("ation")) w = w.slice(0, -5);
  else if (w.length > 5 && w.endsWith("ion") && /[st]ion$/.test(w)) w = w.slice(0, -3);
  else if (w.length > 7 && w.endsWith("ment")) w = w.slice(0, -4);
  else if (w.length > 6 && /[ae]nc[ey]$/.test(w)) w = w.slice(0, -3);
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  if (w.length > 3 && w.endsWith("y")) w = `${w.slice(0, -1)}i`;
  return w;
}

function undouble(w: string): string {
  const last = w.at(-1);
  return w.length > 3 && last === w.at(-2) && last !== "l" && last !== "s" && last !== "z"
    ? w.slice(0, -1)
    : w;
}

/**
 * Phrases whose words mislead one by one ("logged" is no log), rewritten to what they name
 * before a query is split: who the caller is, switching a machine on and off.
 */
const PHRASES: readonly (readonly [RegExp, string])[] = [
  [/\b(logged|signed) (in|on)\b|\b(who )?am i\b/gi, " current authenticated user "],
  [/\bpower(ed)? on\b|\bturn(ed)? on\b/gi, " boot start "],
  // "Who is in the channel", "who opened it": a question about people, whatever the verb.
  [/\bwho\b/gi, " members "],
  [/\bpower(ed)? off\b|\bturn(ed)? off\b/gi, " shutdown stop "],
];

/** A query with its misleading phrases rewritten (see `PHRASES`). */
export function rewritePhrases(query: string): string {
  let text = query;
  for (const [phrase, meaning] of PHRASES) text = text.replace(phrase, meaning);
  return text;
}

/** The stems of `text`, stop words left out. */
export function searchTerms(text: string): string[] {
  const terms: string[] = [];
  for (const word of splitWords(text)) {
    if (STOP_WORDS.has(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

/**
 * What a REST operation does, as its method and path say it and as people ask for it: `create`
 * (POST to a collection), `get` (GET one), `list` (GET many), `update` (PUT/PATCH), `delete`,
 * `search`. Other verbs (merge, archive, star) stay words of their own.
 */
export type SearchAction = "create" | "get" | "list" | "update" | "delete" | "search";

/** The actions by number, as the index stores them (0: none). */
export const ACTIONS: readonly (SearchAction | null)[] = [
  null,
  "create",
  "get",
  "list",
  "update",
  "delete",
  "search",
];

/** The words that name each action, in the forms people use. */
const ACTION_WORDS: Readonly<Record<SearchAction, string>> = {
  create:
    "create add new make open start post insert register submit generate build launch provision spin schedule upload invite book give grant save leave write",
  get: "get fetch show read view retrieve see display detail details info information inspect describe check lookup look obtain return",
  list: "list browse enumerate",
  update:
    "update edit change modify rename patch replace alter adjust configure set toggle save mark complete close finish resolve reopen",
  delete: "delete remove destroy erase drop purge discard uninstall unregister trash wipe",
  search: "search find query filter lookup",
};

const ACTION_OF_STEM = new Map<string, SearchAction[]>();
for (const [action, words] of Object.entries(ACTION_WORDS) as [SearchAction, string][]) {
  for (const word of words.split(" ")) {
    const key = stem(word);
    const list = ACTION_OF_STEM.get(key) ?? [];
    if (!list.includes(action)) list.push(action);
    ACTION_OF_STEM.set(key, list);
  }
}

/** The actions a word of a query names (open → create), none for a word that is no such verb. */
export function actionsOfTerm(term: string): readonly SearchAction[] {
  return ACTION_OF_STEM.get(term) ?? [];
}

/** Words of many: wherever they stand, the query asks for a listing ("show all", "every channel"). */
const QUANTIFIERS = new Set("all every many several multiple".split(" "));

/** Whether `word` (as written, lower-cased) asks for many. */
export function isQuantifier(word: string): boolean {
  return QUANTIFIERS.has(word);
}

/**
 * Groups of words that name the same thing in the APIs people use (a Jira ticket is an issue, a
 * repo a repository, a GitLab merge request GitHub's pull request). General vocabulary of web
 * APIs, never one product's operation names: a query word reaches every word of its group.
 */
const SYNONYM_GROUPS: readonly string[] = [
  "issue ticket bug",
  "repository repo",
  "pull pr",
  "organization org",
  "user member people person account everyone",
  "team group",
  "message msg chat",
  "channel conversation",
  "email mail",
  "folder directory",
  "picture photo image avatar screenshot",
  "song track tune",
  "comment note reply",
  "label tag",
  "webhook hook callback notify notified notification",
  "server droplet instance vm machine linode",
  "disk volume",
  "backup snapshot",
  "key token credential",
  "secret password",
  "variable env",
  "deploy deployment release",
  "attendee attend participant registrant registered",
  "past ended previous finished",
  "contact subscriber audience",
  "document file",
  "configuration config setting",
  "statistic stats analytics report metric perform performance",
  "remove unassign",
  "star favorite favourite",
  "permission access role",
  "schedule plan",
  "invoice bill",
  "subscription plan",
  "payment charge",
  "envelope signature",
  "playback player",
  "follow follower subscribe watch watcher",
  "gist snippet",
  "collaborator collaboration teammate colleague coworker",
  "reminder remind",
  "authenticated current myself",
];

const SYNONYMS_OF_STEM = new Map<string, string[]>();
for (const group of SYNONYM_GROUPS) {
  const stems = group.split(" ").map(stem);
  for (const one of stems) {
    const others = SYNONYMS_OF_STEM.get(one) ?? [];
    for (const other of stems) if (other !== one && !others.includes(other)) others.push(other);
    SYNONYMS_OF_STEM.set(one, others);
  }
}

/** The other stems of `term`'s synonym groups (ticket → issue, bug). */
export function synonymsOfTerm(term: string): readonly string[] {
  return SYNONYMS_OF_STEM.get(term) ?? [];
}

/**
 * What an operation does by its method and path (spec-less tools: none): POST to a collection
 * creates, GET of `…/{id}` gets one, GET of a plural collection lists, PUT/PATCH update, DELETE
 * deletes; a path ending in `search` searches.
 */
export function actionOfOperation(method: string, path: string): SearchAction | null {
  const segments = path.split(/[/#?]/).filter((segment) => segment !== "");
  const last = segments.at(-1) ?? "";
  const lastIsParameter = last.startsWith("{") || last.startsWith("(");
  const lastWords = lastIsParameter ? [] : splitWords(last);
  if (lastWords.some((word) => word === "search" || word === "query")) return "search";
  // A collection under a `search` segment is searched, not listed (`GET /search/repositories`).
  if (method.toLowerCase() === "get" && segments.slice(0, -1).some((segment) => segment === "search"))
    return "search";
  // RPC-style paths name the action in the path (`/conversations.list`, `/chat.delete`).
  if (lastWords.length > 1) {
    const named = lastWords.map((word) => actionsOfTerm(stem(word))).find((actions) => actions.length === 1);
    if (named) return named[0]!;
  }
  switch (method.toLowerCase()) {
    case "post":
      return lastIsParameter
        ? "update"
        : lastWords.length > 0 && isPlural(lastWords.at(-1)!)
          ? "create"
          : null;
    case "get":
      if (lastIsParameter) return "get";
      return lastWords.length > 0 && isPlural(lastWords.at(-1)!) ? "list" : "get";
    case "put":
    case "patch":
      return "update";
    case "delete":
      return "delete";
    default:
      return null;
  }
}

function isPlural(word: string): boolean {
  return word.length > 3 && word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us");
}
