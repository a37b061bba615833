import { toJsonSchema } from "@valibot/to-json-schema";
import type { JsonSchema } from "../json-schema";
import type { NetworkPolicy } from "../net/network-policy";
import { JsonSchemaValidator } from "../validation/json-schema-validator";
import type { AnyToolType, ToolTypeEnvironment } from "./tool-type";

/** A policy that refuses nothing: for validation where no network settings apply. */
export const OPEN_NETWORK_POLICY: NetworkPolicy = { addressProblem: () => null };

/** The tool types known to this service, by `typeId`. Read-only after construction. */
export class ToolTypeRegistry {
  private readonly types: ReadonlyMap<string, AnyToolType>;
  /** What the types' checks use: the given policy and validator, else an open policy and a validator of its own. */
  readonly environment: ToolTypeEnvironment;

  constructor(types: readonly AnyToolType[], environment: Partial<ToolTypeEnvironment> = {}) {
    this.types = new Map(types.map((type) => [type.typeId, type]));
    this.environment = {
      networkPolicy: environment.networkPolicy ?? OPEN_NETWORK_POLICY,
      jsonSchemas: environment.jsonSchemas ?? new JsonSchemaValidator(),
    };
  }

  /** The type with this id, or `undefined`. */
  find(typeId: string): AnyToolType | undefined {
    return this.types.get(typeId);
  }

  /** All type ids, in registration order. */
  ids(): string[] {
    return [...this.types.keys()];
  }

  /** All types with their `parameters` JSON Schema, for `GET /v1/types`. */
  describe(): { typeId: string; description: string; parametersSchema: JsonSchema }[] {
    return [...this.types.values()].map((type) => ({
      typeId: type.typeId,
      description: type.description,
      parametersSchema: toJsonSchema(type.parametersSchema, { errorMode: "ignore" }) as JsonSchema,
    }));
  }
}
