import * as v from "valibot";
import { byString } from "../order";
import type { FireOnceStore } from "../ports/fire-once-store";
import type { Logger } from "../ports/logger";
import type { ServerToolService } from "../tools/server-tool-service";

/** Where a phantom name came from (spec §13.2): the system or recipe text, the user, or the history. */
export type PhantomOrigin = "prompt" | "user" | "context";

export interface PhantomCandidate {
  readonly name: string;
  readonly origin: PhantomOrigin;
}

/** A phantom diagnosis, as a sink receives it. */
export interface PhantomReport {
  readonly tenant: string;
  readonly project: string;
  readonly requestId: string;
  readonly candidates: readonly PhantomCandidate[];
}

/** Where first reports of phantoms go besides the log (`DiagnosticWebhook`); must not wait or throw. */
export interface PhantomSink {
  notify(report: PhantomReport): void;
}

/** What the diagnosis found: `phantom` (names outside the tools array), `blank` (none), `skipped` (`length`). */
export interface EmptyResponseFinding {
  readonly kind: "phantom" | "blank" | "skipped";
  readonly candidates: readonly PhantomCandidate[];
}

/** The diagnosis's answer: the finding, and whether this was the first report of its `requestId`. */
export interface EmptyResponseDiagnosisResult extends EmptyResponseFinding {
  readonly firstReport: boolean;
}

/** One message of the conversation as the engine sent it to the model; extra fields are read where they name tools. */
const MessageSchema = v.looseObject({
  role: v.pipe(v.string(), v.maxLength(64)),
  content: v.optional(v.nullable(v.union([v.string(), v.array(v.unknown())]))),
});

/** The body of `POST T/diagnostics/empty-response` (API.md "Insights and diagnostics"). */
export const EmptyResponseReportSchema = v.strictObject({
  /** The engine's id of the logical model call: the report fires once per id. */
  requestId: v.pipe(v.string(), v.minLength(1, "requestId must not be empty"), v.maxLength(200)),
  messages: v.pipe(v.array(MessageSchema), v.maxLength(10_000)),
  /** The names of the tools array sent with the request. */
  offeredTools: v.pipe(v.array(v.pipe(v.string(), v.maxLength(200))), v.maxLength(10_000)),
  finishReason: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(64)))),
});

export type EmptyResponseReport = v.InferOutput<typeof EmptyResponseReportSchema>;

/** How long a `requestId` counts as reported: engines retry a call within seconds, not days. */
export const DIAGNOSIS_ONCE_TTL_SECONDS = 86_400;

/** Origins in the order they win when a name appears in several places: the root cause first. */
const ORIGIN_RANK: Readonly<Record<PhantomOrigin, number>> = { prompt: 0, user: 1, context: 2 };

/** Tool-name-like tokens: maximal runs of name characters, so `my_file_read` is not `file_read`. */
const TOKEN = /[A-Za-z0-9_]+/g;

/** How deep content parts are walked (content blocks within tool results within messages). */
const MAX_PART_DEPTH = 8;

/** The origin of a message's text: system and developer text teach, the user asks, the rest is history. */
function originOf(role: string): PhantomOrigin {
  if (role === "system" || role === "developer") return "prompt";
  if (role === "user") return "user";
  return "context";
}

/** Every text of a message that may name a tool: its content (parts walked) and the tool names and arguments it carries. */
function textsOf(message: Readonly<Record<string, unknown>>): string[] {
  const texts: string[] = [];
  const walk = (part: unknown, depth: number): void => {
    if (typeof part === "string") {
      texts.push(part);
      return;
    }
    if (depth > MAX_PART_DEPTH) return;
    if (Array.isArray(part)) {
      for (const item of part) walk(item, depth + 1);
      return;
    }
    if (typeof part !== "object" || part === null) return;
    const record = part as Record<string, unknown>;
    for (const field of ["text", "content", "name", "arguments", "function", "input"]) {
      const value = record[field];
      if (field === "input" && typeof value === "object" && value !== null) texts.push(JSON.stringify(value));
      else walk(value, depth + 1);
    }
  };
  walk(message.content, 0);
  walk(message.name, 0);
  walk(message.tool_calls, 0);
  return texts;
}

/**
 * The candidate diff of spec §13.2, pure: the conversation's tokens cut against the names the
 * project knows, minus the offered ones. A known name that was not offered is a phantom
 * candidate, with the origin of its most telling mention (prompt, then user, then context).
 * `finishReason: length` is a deterministic wall, no evidence: `skipped`.
 */
export function findPhantoms(report: EmptyResponseReport, known: ReadonlySet<string>): EmptyResponseFinding {
  const scan = phantomScan(report, known);
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link findPhantoms} for a request thread that serves others too: a report may carry megabytes
 * of conversation, so the scan gives the event loop a turn after every slice of text it read.
 */
export async function findPhantomsYielding(
  report: EmptyResponseReport,
  known: ReadonlySet<string>,
): Promise<EmptyResponseFinding> {
  const scan = phantomScan(report, known);
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
  }
}

/** Characters of conversation scanned between two turns of the event loop (~2 ms of work). */
const SCAN_SLICE_CHARS = 64 * 1024;

/** The scan behind both forms: yields after each slice of text, returns the finding. */
function* phantomScan(
  report: EmptyResponseReport,
  known: ReadonlySet<string>,
): Generator<void, EmptyResponseFinding> {
  if (report.finishReason === "length") return { kind: "skipped", candidates: [] };
  const offered = new Set(report.offeredTools);
  const found = new Map<string, PhantomOrigin>();
  let scanned = 0;
  for (const message of report.messages) {
    const origin = originOf(message.role);
    for (const text of textsOf(message)) {
      for (let start = 0; start < text.length; start += SCAN_SLICE_CHARS) {
        // A slice ends at a non-name character, so no token is cut in two.
        let end = Math.min(text.length, start + SCAN_SLICE_CHARS);
        while (end < text.length && /[A-Za-z0-9_]/.test(text[end]!)) end++;
        for (const [token] of text.slice(start, end).matchAll(TOKEN)) {
          if (!known.has(token) || offered.has(token)) continue;
          const seen = found.get(token);
          if (seen === undefined || ORIGIN_RANK[origin] < ORIGIN_RANK[seen]) found.set(token, origin);
        }
        scanned += end - start;
        start = end - SCAN_SLICE_CHARS;
        if (scanned >= SCAN_SLICE_CHARS) {
          scanned = 0;
          yield;
        }
      }
    }
  }
  const candidates = [...found]
    .map(([name, origin]) => ({ name, origin }))
    .sort(byString((candidate) => candidate.name));
  return candidates.length > 0 ? { kind: "phantom", candidates } : { kind: "blank", candidates: [] };
}

export interface EmptyResponseDiagnosisOptions {
  /** Every name the project knows: the merged cascade, packs expanded. */
  readonly tools: Pick<ServerToolService, "snapshot">;
  /** The built-in tools' names (known to every project). */
  readonly builtInNames: readonly string[];
  /** The fire-once gate, shared by every instance. */
  readonly state: FireOnceStore;
  readonly logger: Logger;
  /** The optional sink for phantoms (a webhook behind a dedup gate). */
  readonly sink?: PhantomSink;
}

/**
 * `EmptyResponseDiagnosticService` (spec §13.2): an engine whose model answered nothing reports
 * the request; the diagnosis reconstructs which tool the model tried to call outside its tools
 * array. Each `requestId` fires once (`markOnce`, across instances): the first report writes one
 * WARN line `llm.diagnostic` — phantom and blank alike — and hands a phantom to the webhook sink,
 * which never blocks or fails the answer. Later reports of the same id answer the same finding
 * with `firstReport: false` and log nothing. A `length` report (`skipped`) fires nothing and
 * leaves its id unused: `firstReport: false`.
 */
export class EmptyResponseDiagnosis {
  constructor(private readonly options: EmptyResponseDiagnosisOptions) {}

  async diagnose(
    tenant: string,
    project: string,
    report: EmptyResponseReport,
  ): Promise<EmptyResponseDiagnosisResult> {
    // The report's one snapshot (its one read of the generations): the request enters here.
    const listed = await (await this.options.tools.snapshot(tenant, project)).tools();
    const known = new Set([...this.options.builtInNames, ...listed.map((tool) => tool.name)]);
    const finding = await findPhantomsYielding(report, known);
    // `length` is no evidence (spec §13.2: never fired on it): it leaves the id unused, so a
    // later report of the same call that ended empty for another reason still fires.
    if (finding.kind === "skipped") return { ...finding, firstReport: false };
    const firstReport = await this.options.state.markOnce(
      `llm.diagnostic/${tenant}/${project}/${report.requestId}`,
      DIAGNOSIS_ONCE_TTL_SECONDS,
    );
    if (firstReport) {
      this.options.logger.warn("llm.diagnostic", {
        tenant,
        project,
        requestId: report.requestId,
        kind: finding.kind,
        candidates: finding.candidates,
        offeredTools: report.offeredTools.length,
        finishReason: report.finishReason ?? null,
      });
      if (finding.kind === "phantom") {
        this.options.sink?.notify({
          tenant,
          project,
          requestId: report.requestId,
          candidates: finding.candidates,
        });
      }
    }
    return { ...finding, firstReport };
  }
}
