import type {
  CatalogEditor,
  DocumentService,
  EmptyResponseDiagnosis,
  Generations,
  Logger,
  ModelCatalogService,
  ObservedToolLimits,
  ProcessService,
  RecipeResolver,
  SecretService,
  ServerToolService,
  ToolBudgetService,
  ToolDispatcher,
  ToolTypeRegistry,
  ToolUsage,
} from "@vance/core";
import type { TokenVerifier } from "./auth";
import type { Metrics } from "./responses";
import type { McpSettings } from "./routes/mcp";

/** Everything the HTTP API needs, built by one composition root per function. */
export interface AppServices {
  readonly version: string;
  /** Verifies bearer tokens (the service's own and the trusted issuers') and mints listing sessions. */
  readonly verifier: TokenVerifier;
  readonly logger: Logger;
  readonly types: ToolTypeRegistry;
  readonly documents: DocumentService;
  readonly tools: ServerToolService;
  readonly dispatcher: ToolDispatcher;
  readonly recipes: RecipeResolver;
  readonly processes: ProcessService;
  readonly usage: ToolUsage;
  /** Whether a layer's write is stored but its generation bump still pending (a write's answer says so). */
  readonly generations: Pick<Generations, "isPending">;
  readonly secrets: SecretService;
  readonly budget: ToolBudgetService;
  readonly observedLimits: ObservedToolLimits;
  /** The compiled model catalog, and its documents' writes (`/v1/models`). */
  readonly catalog: ModelCatalogService;
  readonly catalogEditor: CatalogEditor;
  /** The empty-response diagnosis (`T/diagnostics/empty-response`). */
  readonly diagnostics: EmptyResponseDiagnosis;
  /** The MCP endpoints' browser rules and `T/mcp` session ends. */
  readonly mcp: McpSettings;
  /** This instance's caches, pool and counters (`/v1/metrics`). */
  readonly metrics: () => Metrics;
}
