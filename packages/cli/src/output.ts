/** A stream a command writes text to; a terminal has `isTTY` (and `columns`). */
export interface TextStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Where a command writes: stdout for results, stderr for progress, notes and errors. */
export interface Streams {
  readonly out: TextStream;
  readonly err: TextStream;
}

export const PROCESS_STREAMS: Streams = { out: process.stdout, err: process.stderr };

/** ANSI styles, applied only when the stream is a terminal and `NO_COLOR` is unset (no-color.org). */
export interface Paint {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39] } as const;

export function paint(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Paint {
  const on = stream.isTTY === true && !env.NO_COLOR;
  const style =
    ([open, close]: readonly [number, number]) =>
    (text: string) =>
      on ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    bold: style(STYLES.bold),
    dim: style(STYLES.dim),
    red: style(STYLES.red),
    green: style(STYLES.green),
    yellow: style(STYLES.yellow),
  };
}

/**
 * What may reach a terminal of text a server, a tool or a colleague wrote: control characters
 * (C0 but tab and newline, a lone CR, DEL, C1) and bidirectional overrides and isolates become
 * visible `\uXXXX` escapes — valid inside JSON strings too — so no escape sequence moves the
 * cursor, clears the screen, sets the title or a link, and no text reads backwards. Only the SGR
 * styles `paint` itself writes pass. One linear scan.
 */
const TERMINAL_UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /\u001b\[(?:1|2|22|31|32|33|39)m|\r(?!\n)|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function terminalText(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (match) =>
    match.length > 1 ? match : `\\u${match.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Writes `text` to `stream`, neutralised when the stream is a terminal (a pipe or a file gets it as is). */
export function writeText(stream: TextStream, text: string): void {
  stream.write(stream.isTTY === true ? terminalText(text) : text);
}

/** Rows as aligned columns under a header; the header is bold on a terminal. */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  colours: Paint,
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd();
  return [colours.bold(line(headers)), ...rows.map(line)].join("\n");
}

/** Pretty JSON, the `--json` output of every command: one document, parseable as a whole. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * A one-line progress bar redrawn in place on a terminal, and nothing elsewhere (a log or a pipe
 * gets the summary alone).
 */
export class ProgressBar {
  private readonly active: boolean;
  private done = 0;

  constructor(
    private readonly stream: Streams["err"],
    private readonly total: number,
    enabled: boolean,
  ) {
    this.active = enabled && stream.isTTY === true && total > 0;
  }

  /** Shows `label` as the item in hand. */
  update(label: string): void {
    if (!this.active) return;
    const width = 24;
    const filled = Math.round((this.done / this.total) * width);
    const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
    const text = `[${bar}] ${this.done}/${this.total} ${terminalText(label)}`;
    const columns = this.stream.columns ?? 80;
    this.stream.write(`\r\u001b[2K${text.slice(0, Math.max(10, columns - 1))}`);
  }

  /** Counts one item as finished. */
  tick(): void {
    this.done++;
  }

  /** Clears the line so the summary starts on an empty one. */
  finish(): void {
    if (this.active) this.stream.write("\r\u001b[2K");
  }
}
