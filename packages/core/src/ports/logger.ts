/** Structured logging: one JSON line per event in the functions; a no-op or a recorder in tests. */
export interface Logger {
  info(event: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(event: string, fields?: Readonly<Record<string, unknown>>): void;
  /** Detail below INFO (every name of a list the INFO line counts); absent or silent unless asked for. */
  trace?(event: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** A logger that drops everything. */
export const silentLogger: Logger = { info() {}, warn() {} };
