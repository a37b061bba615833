import {
  type AnthropicManifest,
  type AnthropicWireTool,
  type EmptyResponseDiagnosis,
  type OpenAiManifest,
  type OpenAiWireTool,
  type ProjectClient,
  type SpawnRequest,
  VanceApiError,
  type VanceClient,
} from "@vance/client";
import { mayBeToolLimit, providerRejection } from "./provider-errors.js";

/** The tools' wire format a turn is fetched in. */
export type WireFormat = "openai" | "anthropic";

type WireToolOf<F extends WireFormat> = F extends "anthropic" ? AnthropicWireTool : OpenAiWireTool;
type ManifestOf<F extends WireFormat> = F extends "anthropic" ? AnthropicManifest : OpenAiManifest;

/**
 * One turn of a process: the tools for the model and the two discovery blocks to place (spec
 * §14.3). `discoveryBlock` goes into the cache-stable system prefix, behind the prompt-cache
 * marker; `demotedBlock` into a separate dynamic system message after it (often empty).
 */
export interface Turn<F extends WireFormat = WireFormat> {
  readonly format: F;
  /** The manifest as the service answered it (extra fields of newer services included). */
  readonly manifest: ManifestOf<F>;
  /** The tools array for the model, in the wire format, sorted by name. */
  readonly tools: readonly WireToolOf<F>[];
  /** The names of `tools`, in order. */
  readonly toolNames: readonly string[];
  /** The static discovery block: byte-identical across the turns of a process. */
  readonly discoveryBlock: string;
  /** The demoted block: the tools the budget cut this turn, with the rule that they stay callable. */
  readonly demotedBlock: string;
  /** The skill tools the turn was asked `with`. */
  readonly skillTools: readonly string[];
  /** Whether this turn is the rebuild after the endpoint rejected the tools array. */
  readonly rebuilt: boolean;
}

/** A client tool the engine runs itself; declared to the service at spawn (without `execute`). */
export interface ClientTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly packHint?: string;
  execute(params: unknown): unknown | Promise<unknown>;
}

/** What a tool call came back with, and the text to hand the model as its result. */
export type ToolCallResult =
  | {
      readonly ok: true;
      readonly name: string;
      readonly id?: string;
      readonly value: unknown;
      readonly content: string;
    }
  | {
      readonly ok: false;
      readonly name: string;
      readonly id?: string;
      readonly error: string;
      readonly message: string;
      readonly content: string;
    };

/** A tool call as a model made it: `arguments` as JSON text (OpenAI) or an object (Anthropic, AI SDK). */
export interface ToolCall {
  readonly name: string;
  readonly arguments: unknown;
  readonly id?: string;
}

/** An empty answer, as the request that got it was sent (spec §13.2). */
export interface EmptyResponse {
  /** The logical call's id: the same for every retry of one call (default: a fresh one). */
  readonly requestId?: string;
  /** The conversation as sent, system text included, in any wire format (`{ role, content }` and more). */
  readonly messages: readonly { readonly role: string; readonly content?: unknown }[];
  /** The names in the tools array sent. */
  readonly offeredTools: readonly string[];
  readonly finishReason?: string | null;
}

/** What happened in a process, for a log line or a UI. */
export type EngineEvent =
  | { readonly type: "turn"; readonly turn: Turn }
  | {
      readonly type: "limit_learned";
      readonly model: string;
      readonly maxTools: number;
      readonly rejected: number;
    }
  | { readonly type: "turn_rebuilt"; readonly turn: Turn }
  | {
      readonly type: "empty_response";
      readonly requestId: string;
      readonly diagnosis: EmptyResponseDiagnosis;
    };

/** The endpoint still rejects the tools array after the turn was rebuilt with the limit it named. */
export class ToolLimitError extends Error {
  override readonly name = "ToolLimitError";

  constructor(
    message: string,
    readonly model: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

export interface EngineOptions {
  readonly client: VanceClient;
  readonly tenant: string;
  readonly project: string;
  /** Told of turns, learned limits, rebuilt turns and empty responses. */
  readonly onEvent?: (event: EngineEvent) => void;
}

export interface SpawnOptions extends Omit<SpawnRequest, "clientTools"> {
  /** Tools the engine runs itself: declared to the service, executed here when called. */
  readonly clientTools?: readonly ClientTool[];
}

/** How many request ids an engine process remembers having reported. */
const REPORTED_IDS = 1000;

const contentOf = (value: unknown): string =>
  typeof value === "string" ? value : JSON.stringify(value ?? null);

function failure(call: ToolCall, error: string, message: string): ToolCallResult {
  return {
    ok: false,
    name: call.name,
    ...(call.id === undefined ? {} : { id: call.id }),
    error,
    message,
    content: JSON.stringify({ error, message }),
  };
}

/** The engine's half of the protocol for one project of one service (spec §13–§14). */
export class VanceEngine {
  readonly #options: EngineOptions;
  readonly #project: ProjectClient;

  constructor(options: EngineOptions) {
    this.#options = options;
    this.#project = options.client.project(options.tenant, options.project);
  }

  /** `POST T/processes`: spawns a process (its allow set frozen) and returns its engine side. */
  async spawn(options: SpawnOptions): Promise<EngineProcess> {
    const { clientTools = [], ...request } = options;
    const spawned = await this.#project.spawn({
      ...request,
      clientTools: clientTools.map(({ execute: _execute, ...declared }) => declared),
    });
    return new EngineProcess({
      ...this.#options,
      projectClient: this.#project,
      processId: spawned.processId,
      allowedTools: spawned.allowedTools,
      models: request.models,
      clientTools,
    });
  }

  /** The engine side of a process spawned earlier (its client tools must be given again to run). */
  attach(processId: string, options: { models: readonly string[]; clientTools?: readonly ClientTool[] }) {
    return this.#project.process(processId).then(
      (record) =>
        new EngineProcess({
          ...this.#options,
          projectClient: this.#project,
          processId,
          allowedTools: record.allowedTools,
          models: options.models,
          clientTools: options.clientTools ?? [],
        }),
    );
  }
}

interface EngineProcessOptions extends EngineOptions {
  readonly projectClient: ProjectClient;
  readonly processId: string;
  readonly allowedTools: readonly string[];
  readonly models: readonly string[];
  readonly clientTools: readonly ClientTool[];
}

/**
 * One spawned process, as an engine drives it turn by turn: {@link turn} before each model call,
 * {@link handleToolCall} for each call the model made, {@link onProviderError} when the endpoint
 * rejected the request, {@link onEmptyResponse} when it answered nothing, and {@link end} when
 * the conversation is over.
 */
export class EngineProcess {
  readonly processId: string;
  /** The frozen allow set: every name the process may call. */
  readonly allowedTools: readonly string[];
  /** The model chain (`instance/slug`); reports name the first unless told otherwise. */
  readonly models: readonly string[];
  readonly clientTools: ReadonlyMap<string, ClientTool>;
  readonly #options: EngineProcessOptions;
  readonly #reported = new Set<string>();

  constructor(options: EngineProcessOptions) {
    this.#options = options;
    this.processId = options.processId;
    this.allowedTools = options.allowedTools;
    this.models = options.models;
    this.clientTools = new Map(options.clientTools.map((tool) => [tool.name, tool]));
  }

  /** The project's calls (tools, documents, diagnostics) with this engine's client. */
  get project(): ProjectClient {
    return this.#options.projectClient;
  }

  /**
   * Ends the process when its conversation is over: `DELETE T/processes/{id}` deletes its record
   * and gives its place among the tenant's live processes back (`VANCE_QUOTA_LIVE_PROCESSES`;
   * past it a spawn answers 429 `quota_exceeded`). A process ended already resolves too; later
   * calls of this process answer 404 `process_not_found`.
   */
  end(): Promise<void> {
    return this.project.end(this.processId);
  }

  /**
   * This turn's manifest: `GET T/processes/{id}/manifest` — the tools array under the endpoint's
   * budget, activations of earlier turns included, and the two discovery blocks.
   */
  async turn<F extends WireFormat = "openai">(
    options: { readonly format?: F; readonly skillTools?: readonly string[] } = {},
  ): Promise<Turn<F>> {
    const turn = await this.#fetchTurn(options.format ?? ("openai" as F), options.skillTools ?? [], false);
    this.#options.onEvent?.({ type: "turn", turn });
    return turn;
  }

  async #fetchTurn<F extends WireFormat>(format: F, skillTools: readonly string[], rebuilt: boolean) {
    const manifest = (await this.project.manifest(this.processId, {
      format,
      ...(skillTools.length > 0 ? { with: skillTools.join(",") } : {}),
    })) as ManifestOf<F>;
    const tools = manifest.tools as unknown as readonly WireToolOf<F>[];
    const toolNames = (tools as readonly (OpenAiWireTool | AnthropicWireTool)[]).map((tool) =>
      "function" in tool ? tool.function.name : tool.name,
    );
    const turn: Turn<F> = {
      format,
      manifest,
      tools,
      toolNames,
      discoveryBlock: manifest.discoveryBlock,
      demotedBlock: manifest.demotedDiscoveryBlock,
      skillTools,
      rebuilt,
    };
    return turn;
  }

  /**
   * Runs one call the model made: `POST T/processes/{id}/invoke` (the allow set, activation and
   * usage are the service's), a client tool here. A tool's failure, arguments that are not JSON or
   * fail its schema, and a name the process cannot call come back as a failed result for the
   * model to read; the service being unreachable or refusing the token throws.
   */
  async handleToolCall(call: ToolCall, turn?: Pick<Turn, "skillTools">): Promise<ToolCallResult> {
    let params: unknown = call.arguments ?? {};
    if (typeof params === "string") {
      const text = params;
      try {
        params = text.trim() === "" ? {} : JSON.parse(text);
      } catch {
        return failure(
          call,
          "InvalidArguments",
          `the arguments of ${call.name} are not JSON: ${text.slice(0, 200)}`,
        );
      }
    }
    let answer: Awaited<ReturnType<ProjectClient["invoke"]>>;
    try {
      answer = await this.project.invoke(this.processId, call.name, params, turn?.skillTools ?? []);
    } catch (error) {
      if (
        error instanceof VanceApiError &&
        (error.status === 403 || error.status === 404 || error.status === 422 || error.status === 400)
      ) {
        return failure(call, error.problem.code, error.problem.detail);
      }
      throw error;
    }
    const id = call.id === undefined ? {} : { id: call.id };
    if ("route" in answer) {
      const tool = this.clientTools.get(answer.name);
      if (!tool) {
        return failure(
          call,
          "ClientToolMissing",
          `'${answer.name}' is a client tool this engine has no handler for`,
        );
      }
      try {
        const value = await tool.execute(answer.params);
        return { ok: true, name: call.name, ...id, value, content: contentOf(value) };
      } catch (error) {
        return failure(call, "ClientToolError", error instanceof Error ? error.message : String(error));
      }
    }
    if ("error" in answer) return failure(call, answer.error, answer.message);
    return { ok: true, name: call.name, ...id, value: answer.value, content: contentOf(answer.value) };
  }

  /**
   * The endpoint rejected the request for `turn` (spec §14.1, "Self-correction on drift"): when
   * the rejection names the tools array's limit, reports it to `observed-limits` and answers the
   * same turn rebuilt under it — once; a rebuilt turn rejected again throws a `ToolLimitError`
   * that says what to configure, never walking the fallback chain (every entry behind the same
   * endpoint answers alike). A limit below the capability floor plus the reserve, which the
   * service refuses to learn (422 `budget_floor_exceeded`), is a `ToolLimitError` with the
   * service's reason. Any other error is thrown as it came.
   */
  async onProviderError<F extends WireFormat>(
    error: unknown,
    turn: Turn<F>,
    options: { readonly model?: string } = {},
  ): Promise<Turn<F>> {
    const rejection = providerRejection(error);
    if (!rejection || !mayBeToolLimit(rejection)) throw error;
    const model = options.model ?? this.models[0];
    if (model === undefined) throw error;
    if (turn.rebuilt) {
      throw new ToolLimitError(
        `${model} rejected the tools array again after the turn was rebuilt with ${turn.tools.length} tools under the limit it named; set maxTools for this endpoint in the model catalog. The provider said: ${rejection.text.slice(0, 300)}`,
        model,
        error,
      );
    }
    let maxTools: number;
    try {
      ({ maxTools } = await this.#options.client.reportObservedLimit(model, rejection.text));
    } catch (reportError) {
      if (reportError instanceof VanceApiError && reportError.problem.code === "no_limit_in_error")
        throw error;
      // The limit named is below the capability floor plus the reserve: the service learns
      // nothing, since no manifest could fit it; what to configure is in its reason.
      if (reportError instanceof VanceApiError && reportError.problem.code === "budget_floor_exceeded") {
        throw new ToolLimitError(
          `${model} rejected ${turn.tools.length} tools with a limit no manifest of this process fits, so it was not learned: ${reportError.problem.detail}`,
          model,
          error,
        );
      }
      throw reportError;
    }
    this.#options.onEvent?.({ type: "limit_learned", model, maxTools, rejected: turn.tools.length });
    let rebuilt: Turn<F>;
    try {
      rebuilt = await this.#fetchTurn(turn.format, turn.skillTools, true);
    } catch (manifestError) {
      if (manifestError instanceof VanceApiError && manifestError.problem.code === "budget_floor_exceeded") {
        throw new ToolLimitError(
          `${model} takes at most ${maxTools} tools, which no manifest of this process fits: ${manifestError.problem.detail}`,
          model,
          error,
        );
      }
      throw manifestError;
    }
    if (rebuilt.tools.length >= turn.tools.length) {
      throw new ToolLimitError(
        `${model} rejected ${turn.tools.length} tools (limit ${maxTools} learned), but the process's manifest did not shrink (${rebuilt.tools.length} tools): the model chain's budget does not reach this endpoint`,
        model,
        error,
      );
    }
    this.#options.onEvent?.({ type: "turn_rebuilt", turn: rebuilt });
    return rebuilt;
  }

  /**
   * A model call with the resilience of spec §14.1: fetches the turn, builds the request from it
   * and sends it; on a tool-limit rejection builds and sends the rebuilt turn once
   * ({@link onProviderError}). Answers the turn, the request that was answered (what an
   * empty-response report needs) and the answer.
   */
  async runTurn<Request, R, F extends WireFormat = "openai">(
    build: (turn: Turn<F>) => Request,
    send: (request: Request) => Promise<R>,
    options: { readonly format?: F; readonly skillTools?: readonly string[]; readonly model?: string } = {},
  ): Promise<{ turn: Turn<F>; request: Request; result: R }> {
    let turn = await this.turn<F>(options);
    for (;;) {
      const request = build(turn);
      try {
        return { turn, request, result: await send(request) };
      } catch (error) {
        turn = await this.onProviderError(error, turn, options);
      }
    }
  }

  /**
   * The model answered nothing (spec §13.2): posts the request to the empty-response diagnosis
   * once per `requestId`, never for `finishReason: "length"` (a deterministic wall, no evidence).
   * Answers the finding, or `undefined` when nothing was posted.
   */
  async onEmptyResponse(empty: EmptyResponse): Promise<EmptyResponseDiagnosis | undefined> {
    if (empty.finishReason === "length") return undefined;
    const requestId = empty.requestId ?? globalThis.crypto.randomUUID();
    if (this.#reported.has(requestId)) return undefined;
    this.#reported.add(requestId);
    if (this.#reported.size > REPORTED_IDS) this.#reported.delete(this.#reported.values().next().value!);
    const diagnosis = await this.project.reportEmptyResponse({
      requestId,
      messages: empty.messages as { role: string; content?: string | unknown[] | null }[],
      offeredTools: [...empty.offeredTools],
      ...(empty.finishReason === undefined ? {} : { finishReason: empty.finishReason }),
    });
    this.#options.onEvent?.({ type: "empty_response", requestId, diagnosis });
    return diagnosis;
  }
}

/** The system prefix a turn's model call starts with: the engine's system text, then the static block. */
export function staticPrefix(system: string | undefined, turn: Pick<Turn, "discoveryBlock">): string {
  return [system, turn.discoveryBlock].filter((part) => part !== undefined && part !== "").join("\n\n");
}
