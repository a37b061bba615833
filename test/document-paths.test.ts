import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";
import { freshS3Store } from "./support/stores";

type Client = Awaited<ReturnType<typeof projectClient>>;

type App = Awaited<ReturnType<typeof testApp>>["app"];

const putDoc = (client: Client, path: string, body = "text") =>
  client.call("PUT", `/documents/${path}`, body, "text/markdown");

async function putWith(client: Client, app: App, path: string, headers: Record<string, string>) {
  const res = await app.request(`${client.base}/documents/${path}`, {
    method: "PUT",
    headers: { ...client.headers, "content-type": "text/markdown", ...headers },
    body: "text",
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("names no store may hold answer 400 invalid_id, on every store", () => {
  for (const [name, s3] of [
    ["filesystem store", false],
    ["S3 store (s3rver)", true],
  ] as const) {
    it(`refuses the temp-file suffix in any segment (${name})`, async () => {
      const { app } = await testApp(s3 ? { documents: await freshS3Store("paths") } : {});
      const client = await projectClient(app);
      for (const path of ["a.vance-tmp", "notes/x.vance-tmp/y.md", "notes/b.md.0123abcd.vance-tmp"]) {
        const res = await putDoc(client, path);
        expect(res.status, path).toBe(400);
        expect(res.body.code, path).toBe("invalid_id");
        expect(String(res.body.detail), path).toContain(".vance-tmp");
        expect((await client.call("GET", `/documents/${path}`)).status, path).toBe(400);
      }
    });

    it(`refuses the audit sidecar suffix in any segment (${name})`, async () => {
      const { app } = await testApp(s3 ? { documents: await freshS3Store("paths") } : {});
      const client = await projectClient(app);
      for (const path of ["a.md.vance-meta", "notes/x.vance-meta/y.md"]) {
        const res = await putDoc(client, path);
        expect(res.status, path).toBe(400);
        expect(String(res.body.detail), path).toContain(".vance-meta");
      }
    });
  }

  it("refuses a doc_lookup path with an empty segment on write, and a stored one answers 422, not 500", async () => {
    const { app, documents } = await testApp();
    const client = await projectClient(app);
    const yaml = "type: doc_lookup\ndescription: Looks up.\nparameters:\n  path: a//b\n";
    const put = await client.call("PUT", "/tools/look", yaml, "application/yaml");
    expect(put.status).toBe(422);
    expect(put.body.code).toBe("validation_failed");
    // Written past the API, as an older version (or a hand edit) could have.
    await documents.put("acme/shop/server-tools/look.yaml", yaml);
    const invoked = await client.call("POST", "/tools/look/invoke", { params: {} });
    expect(invoked.status).toBe(422);
    expect(invoked.body.code).toBe("invalid_document");
  });
});

describe("file/folder collisions answer 409 path_conflict on the filesystem store", () => {
  it("refuses a/b.md while a is a document, and a while a/ holds documents; both stay intact", async () => {
    const { app, dataDir, documents } = await testApp();
    const client = await projectClient(app);
    expect((await putDoc(client, "a", "file a")).status).toBe(201);
    expect((await putDoc(client, "d/b.md", "in d")).status).toBe(201);

    for (const path of ["a/b.md", "a/deeper/c.md", "d"]) {
      const res = await putDoc(client, path);
      expect(res.status, path).toBe(409);
      expect(res.body.code, path).toBe("path_conflict");
    }
    const conditional = await putWith(client, app, "d", { "if-none-match": "*" });
    expect([conditional.status, conditional.body.code]).toEqual([409, "path_conflict"]);
    // The tool route shares the rule: a folder where the tool document would be (made past the
    // API, which refuses that path itself).
    await documents.put("acme/shop/server-tools/clash.yaml/x.md", "x");
    const tool = await client.call(
      "PUT",
      "/tools/clash",
      "type: doc_lookup\ndescription: c\nparameters: {path: a}\n",
      "application/yaml",
    );
    expect([tool.status, tool.body.code]).toEqual([409, "path_conflict"]);

    const read = await app.request(`${client.base}/documents/a`, { headers: client.headers });
    expect(await read.text()).toBe("file a");
    const inD = await app.request(`${client.base}/documents/d/b.md`, { headers: client.headers });
    expect(await inD.text()).toBe("in d");
    expect((await readdir(join(dataDir, "documents", "acme", "shop", "d"))).sort()).toEqual([
      "b.md",
      "b.md.vance-meta",
    ]);
  });

  it("holds a and a/b.md side by side on S3 (s3rver): object keys have no folders", async () => {
    const { app } = await testApp({ documents: await freshS3Store("paths") });
    const client = await projectClient(app);
    expect((await putDoc(client, "a", "file a")).status).toBe(201);
    expect((await putDoc(client, "a/b.md", "below a")).status).toBe(201);
  });
});

describe("the validated folders match case-sensitively", () => {
  it("refuses other casings of server-tools/ and mcp-servers/ with 400 invalid_id and stores nothing", async () => {
    const { app, dataDir } = await testApp();
    const client = await projectClient(app);
    for (const path of [
      "SERVER-TOOLS/x.yaml",
      "Server-Tools/x.yaml",
      "MCP-SERVERS/x.yaml",
      "mcp-Servers/x.yaml",
    ]) {
      const res = await client.call("PUT", `/documents/${path}`, "type: nope\n", "application/yaml");
      expect(res.status, path).toBe(400);
      expect(res.body.code, path).toBe("invalid_id");
      expect(String(res.body.detail), path).toMatch(/only in case/);
    }
    await expect(readdir(join(dataDir, "documents"))).rejects.toMatchObject({ code: "ENOENT" });
    // The exact folder is validated; the same name deeper down is an ordinary document.
    const invalid = await client.call(
      "PUT",
      "/documents/server-tools/x.yaml",
      "type: nope\n",
      "application/yaml",
    );
    expect(invalid.status).toBe(422);
    expect(
      (await client.call("PUT", "/documents/notes/SERVER-TOOLS/x.yaml", "a: 1\n", "application/yaml")).status,
    ).toBe(201);
  });
});
