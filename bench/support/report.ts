/**
 * Shared helpers of the benches: statistics over timings, number formatting, a column-aligned
 * text table, and the "run `main` when executed directly" guard.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** A table column: its title, and whether its cells are right-aligned. */
export interface Column {
  readonly title: string;
  readonly right?: boolean;
}

/** The median of `values` (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** The `p` quantile (0 to 1) of `values`, by linear interpolation between closest ranks. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * p;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
}

/** A duration in milliseconds as µs, ms or s, e.g. `812.4 µs`, `5.02 ms`, `12.3 ms`, `1.25 s`. */
export function formatMs(ms: number): string {
  if (ms < 1) return `${formatNumber(ms * 1000, 1)} µs`;
  if (ms < 1000) return `${formatNumber(ms, ms < 10 ? 2 : 1)} ms`;
  return `${formatNumber(ms / 1000, 2)} s`;
}

/** `value` with exactly `digits` fraction digits and en-US thousands separators. */
export function formatNumber(value: number, digits: number): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * Column-aligned text: the titles, a line of dashes, then one line per row; columns are two spaces
 * apart and trailing blanks are trimmed, so a row of empty cells prints as a blank line.
 */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, i) =>
    Math.max(column.title.length, ...rows.map((row) => (row[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    columns
      .map((column, i) => {
        const cell = cells[i] ?? "";
        return column.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [
    line(columns.map((column) => column.title)),
    line(widths.map((width) => "-".repeat(width))),
    ...rows.map(line),
  ].join("\n");
}

/** Runs `main` when the module at `moduleUrl` (its `import.meta.url`) is the script node was started with. */
export function runIfMain(moduleUrl: string, main: () => Promise<void>): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(resolve(process.argv[1])).href) return;
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
