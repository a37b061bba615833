import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { CountingObjectStore } from "@vance/adapters/testing";
import { describe, expect, it } from "vitest";
import { bearer, testApp } from "./support/app";
import { projectClient } from "./support/client";
import { freshS3Store } from "./support/stores";

// Spec §2: audit fields (created, updated, by whom) live on the document. The API answers them on
// tool and document reads; the stores keep them beside the bytes, so reads cost nothing extra.

const T = "/v1/tenants/acme/projects/shop";
const TOOL = "type: doc_lookup\ndescription: Audited.\nparameters:\n  path: documents/getting_started.md\n";

type App = Awaited<ReturnType<typeof testApp>>["app"];

async function write(
  app: App,
  path: string,
  body: string,
  sub: string | undefined,
  type = "application/yaml",
) {
  const headers = await bearer({ tenant: "acme", roles: ["read", "write"], ...(sub ? { sub } : {}) });
  const res = await app.request(`${T}${path}`, {
    method: "PUT",
    headers: { ...headers, "content-type": type },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const later = (a: unknown, b: unknown) => Date.parse(String(a)) > Date.parse(String(b));

describe("audit fields on tool and document reads", () => {
  // s3rver ignores conditional writes (DESIGN §5): the service's create attempt (If-None-Match: *)
  // overwrites there, so a replacement through the API is a creation; real S3 refuses it and the
  // put that follows keeps createdAt (the S3 adapter's contract suite shows the metadata kept).
  for (const [name, s3] of [
    ["filesystem store", false],
    ["S3 store (s3rver), user metadata", true],
  ] as const) {
    it(`createdAt, updatedAt and updatedBy from the token's subject, on writes and reads (${name})`, async () => {
      // The store's clock, moved by the test: a later write is later without waiting.
      const clock = { ms: Date.now() };
      const now = () => clock.ms;
      const documents = new CountingObjectStore(
        s3
          ? await freshS3Store("audit", { now })
          : new FsObjectStore(join(mkdtempSync(join(tmpdir(), "vance-audit-")), "documents"), { now }),
      );
      const { app } = await testApp({ documents });
      const client = await projectClient(app);

      const created = await write(app, "/tools/audited", TOOL, "alice@example.com");
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ createdBy: "alice@example.com", updatedBy: "alice@example.com" });
      expect(created.body.createdAt).toBe(created.body.updatedAt);

      clock.ms += 1000;
      const replaced = await write(app, "/tools/audited", TOOL.replace("Audited.", "Audited again."), "bob");
      expect(replaced.status).toBe(s3 ? 201 : 200);
      const createdAt = s3 ? replaced.body.createdAt : created.body.createdAt;
      // The creator stays across an update (on s3rver the update was a creation, by bob).
      const createdBy = s3 ? "bob" : "alice@example.com";
      expect(replaced.body).toMatchObject({ createdAt, createdBy, updatedBy: "bob" });
      expect(later(replaced.body.updatedAt, created.body.updatedAt)).toBe(true);

      // Warm reads answer them without a store request (the first listing reads the layers).
      await client.call("GET", "/tools");
      documents.reset();
      const read = await client.call("GET", "/tools/audited");
      expect(read.body).toMatchObject({
        createdAt,
        createdBy,
        updatedAt: replaced.body.updatedAt,
        updatedBy: "bob",
      });
      const listed = await client.call("GET", "/tools");
      const summary = (listed.body.tools as Record<string, unknown>[]).find(
        (tool) => tool.name === "audited",
      );
      expect(summary).toMatchObject({
        createdAt,
        createdBy,
        updatedAt: replaced.body.updatedAt,
        updatedBy: "bob",
      });
      expect(documents.total).toBe(0);

      // Bundled and built-in tools have no document of a layer: nulls.
      const bundled = await client.call("GET", "/tools/doc_getting_started");
      expect(bundled.body).toMatchObject({
        createdAt: null,
        createdBy: null,
        updatedAt: null,
        updatedBy: null,
      });
      const builtIn = (listed.body.tools as Record<string, unknown>[]).find((tool) => tool.name === "whoami");
      expect(builtIn).toMatchObject({ createdAt: null, createdBy: null, updatedAt: null, updatedBy: null });

      // Any document: the write's answer, and headers on the read (the subject percent-encoded).
      const note = await write(app, "/documents/notes/today.md", "# today\n", "carol ü", "text/markdown");
      expect(note.body).toMatchObject({ path: "notes/today.md", createdBy: "carol ü", updatedBy: "carol ü" });
      const got = await app.request(`${T}/documents/notes/today.md`, { headers: client.headers });
      expect(got.headers.get("x-vance-updated-by")).toBe(encodeURIComponent("carol ü"));
      expect(got.headers.get("x-vance-created-by")).toBe(encodeURIComponent("carol ü"));
      expect(got.headers.get("x-vance-created-at")).toBe(note.body.createdAt);
      expect(got.headers.get("x-vance-updated-at")).toBe(note.body.updatedAt);

      // A token without a subject writes anonymously: updatedBy null, createdAt kept.
      const anonymous = await write(app, "/tools/audited", TOOL, undefined);
      expect(anonymous.body).toMatchObject({ updatedBy: null, ...(s3 ? {} : { createdAt, createdBy }) });
    });
  }
});
