import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { GenerationStore } from "@vance/core";
import { type DynamoStateTable, type ItemKey, itemId, keyPart } from "./shared";

/**
 * Generation markers, each item `GEN#{marker}` / `GEN`: every manifest reads them, so they have
 * a partition key each rather than sharing one hot partition.
 */
export class DynamoGenerationStore implements GenerationStore {
  constructor(private readonly table: DynamoStateTable) {}

  /** `ADD` creates the attribute at 0 first, so the first bump answers 1. */
  async bumpGeneration(marker: string): Promise<number> {
    const out = await this.table.request(() =>
      this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: generationKey(marker),
          UpdateExpression: "ADD #g :one",
          ExpressionAttributeNames: { "#g": "generation" },
          ExpressionAttributeValues: { ":one": 1 },
          ReturnValues: "UPDATED_NEW",
        }),
      ),
    );
    return Number(out.Attributes?.generation);
  }

  /** One BatchGetItem per 100 markers (plus retry rounds for unprocessed keys); none for no markers. */
  async getGenerations(markers: readonly string[]): Promise<number[]> {
    if (markers.length === 0) return [];
    const items = await this.table.batchGet(markers.map(generationKey));
    return markers.map((marker) => generationOf(items.get(itemId(generationKey(marker)))));
  }
}

export function generationKey(marker: string): ItemKey {
  return { pk: `GEN#${keyPart(marker)}`, sk: "GEN" };
}

export function generationOf(item: Record<string, unknown> | undefined): number {
  return item === undefined ? 0 : Number(item.generation ?? 0);
}
