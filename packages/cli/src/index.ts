export { ApiError, CliError, connect } from "./api";
export { DEFAULT_URL, runCli } from "./cli";
export { type LintProblem, type LintResult, lintPaths, lintRegistry } from "./lint";
export type { Streams, TextStream } from "./output";
export { folderDocuments, LayerSync, type PushSummary } from "./sync";
