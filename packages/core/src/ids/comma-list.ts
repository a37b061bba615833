/**
 * A comma-separated list (a query parameter, a setting): entries trimmed, empty ones dropped.
 * The one spelling every `?with=`, `?chain=`, `?models=` and list setting reads through.
 */
export function commaList(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}
