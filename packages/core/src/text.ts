/**
 * Small text rules applied to what tenants and upstreams send. Each is a linear scan: none of
 * this text may meet a backtracking regex on the serving thread (README, *Isolation*).
 */

/** `text` without the runs of `char` at its start and/or end. */
export function trimChar(text: string, char: string, ends: "start" | "end" | "both" = "both"): string {
  let start = 0;
  let end = text.length;
  if (ends !== "end") while (start < end && text[start] === char) start++;
  if (ends !== "start") while (end > start && text[end - 1] === char) end--;
  return text.slice(start, end);
}
