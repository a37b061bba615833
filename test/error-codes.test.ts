import { ERROR_STATUS, ERROR_STATUS_OVERRIDES, isErrorCode } from "@vance/core";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { answerOf, apiDocument, schemaFor } from "./support/openapi";

const METHODS = ["get", "put", "post", "delete", "patch"] as const;

describe("the problem codes of /openapi.json agree with ERROR_STATUS", () => {
  it("declares each code only under its own status or its documented second one", async () => {
    const { app } = await testApp();
    const doc = await apiDocument(app);
    const wrong: string[] = [];
    let seen = 0;
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const method of METHODS) {
        const operation = item?.[method];
        if (!operation) continue;
        for (const status of Object.keys(operation.responses ?? {}).map(Number)) {
          if (status < 400) continue;
          const schema = schemaFor(answerOf(operation, status)?.content, "application/problem+json") as {
            allOf: { properties?: { code?: { enum?: string[] } } }[];
          };
          for (const code of schema.allOf[1]?.properties?.code?.enum ?? []) {
            seen++;
            const allowed = isErrorCode(code)
              ? [ERROR_STATUS[code], (ERROR_STATUS_OVERRIDES as Record<string, number>)[code]]
              : [];
            if (!allowed.includes(status)) wrong.push(`${method.toUpperCase()} ${path}: ${status} ${code}`);
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(wrong).toEqual([]);
  });
});
