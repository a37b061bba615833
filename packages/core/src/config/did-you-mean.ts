/** Names longer than this are never compared: no field name is, and the comparison stays bounded. */
const MAX_COMPARED_LENGTH = 64;

/**
 * The known name `word` most likely misspells, or null: the same name in another case, else the
 * closest within an edit distance of a third of its length (at least 1, at most 3).
 *
 * @example closestName("maxtools", ["maxTools", "wireType"]) // "maxTools"
 */
export function closestName(word: string, known: readonly string[]): string | null {
  if (word.length > MAX_COMPARED_LENGTH) return null;
  const lower = word.toLowerCase();
  const sameInOtherCase = known.find((name) => name.toLowerCase() === lower);
  if (sameInOtherCase !== undefined) return sameInOtherCase;
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | null = null;
  let bestDistance = allowed + 1;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** "unknown field 'x'", with the hint when a known name is close. */
export function unknownFieldMessage(field: string, known: readonly string[]): string {
  const hint = closestName(field, known);
  const shown = field.length > MAX_COMPARED_LENGTH ? `${field.slice(0, MAX_COMPARED_LENGTH)}…` : field;
  return hint === null
    ? `unknown field '${shown}'; known fields: ${known.join(", ")}`
    : `unknown field '${shown}'; did you mean '${hint}'?`;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
