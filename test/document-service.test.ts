import { DocumentService, VanceError } from "@vance/core";
import { describe, expect, it } from "vitest";
import { docTool, toolServices } from "./support/fixtures";

const T = "acme";
const P = "shop";

function documentService(bundled: Record<string, string> = {}) {
  const services = toolServices({ bundled });
  return { ...services, documents: new DocumentService(services.cascade, services.tools) };
}

async function failure(promise: Promise<unknown>): Promise<VanceError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof VanceError)) throw new Error(`expected a VanceError, got ${String(error)}`);
  return error;
}

describe("DocumentService (spec §4, §9)", () => {
  it("stores a plain document as sent, in the addressed layer, and reads it through the cascade", async () => {
    const { documents } = documentService({ "documents/guide.md": "# bundled" });
    expect((await documents.get(T, P, "documents/guide.md")).layer).toBe("bundled");

    const created = await documents.put(T, "_tenant", "documents/guide.md", "# tenant", {});
    expect(created).toMatchObject({ kind: "document", created: true, layer: "tenant" });
    const replaced = await documents.put(T, "_tenant", "documents/guide.md", "# tenant 2", {});
    expect(replaced).toMatchObject({ kind: "document", created: false, layer: "tenant" });
    expect(await documents.get(T, P, "documents/guide.md")).toMatchObject({
      layer: "tenant",
      body: "# tenant 2",
    });

    await documents.remove(T, "_tenant", "documents/guide.md", undefined);
    expect((await documents.get(T, P, "documents/guide.md")).layer).toBe("bundled");
  });

  it("answers document_not_found when no layer has the path", async () => {
    const { documents } = documentService();
    const error = await failure(documents.get(T, P, "documents/missing.md"));
    expect([error.code, error.status]).toEqual(["document_not_found", 404]);
  });

  it("validates a write into server-tools/ as a tool and stores nothing that is not one", async () => {
    const { documents, tools } = documentService();
    const written = await documents.put(T, P, "server-tools/doc_intro.yaml", docTool("Intro"), {});
    expect(written.kind === "tool" && written.tool.layer).toBe("project");
    expect((await (await tools.snapshot(T, P)).require("doc_intro")).config.description).toBe("Intro");

    const invalid = await failure(documents.put(T, P, "server-tools/doc_bad.yaml", "type: nope\n", {}));
    expect(invalid.status).toBe(422);
    await expect(documents.get(T, P, "server-tools/doc_bad.yaml")).rejects.toMatchObject({
      code: "document_not_found",
    });
  });

  it("refuses a server-tools/ path that names no tool", async () => {
    const { documents, store } = documentService();
    for (const path of ["server-tools/nested/doc_x.yaml", "server-tools/doc_x.json"]) {
      const error = await failure(documents.put(T, P, path, docTool("X"), {}));
      expect([error.code, error.status]).toEqual(["invalid_id", 400]);
    }
    expect(store.counts.put).toBe(0);
  });
});
