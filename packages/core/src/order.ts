/**
 * The one string order of the service: by code point, which is UTF-8 byte order — the order S3
 * lists keys in and SQLite (BINARY) and DynamoDB sort strings in, so a list sorted here agrees
 * with one a store sorted. Plain `<` compares UTF-16 code units and would put astral characters
 * (surrogate pairs) before U+E000–U+FFFF. Equal strings compare as 0, so sorts are stable.
 */
export function compareStrings(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xSurrogate = x >= 0xd800 && x <= 0xdfff;
      const ySurrogate = y >= 0xd800 && y <= 0xdfff;
      if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

/**
 * A comparator over one string field, in `compareStrings` order.
 *
 * @example tools.sort(byString((tool) => tool.name))
 */
export function byString<T>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => compareStrings(key(a), key(b));
}
