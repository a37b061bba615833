/** Results `tool_search` answers at most per call. */
export const MAX_SEARCH_RESULTS = 25;
/** Results when the call names no `limit`. */
export const DEFAULT_SEARCH_RESULTS = 5;
