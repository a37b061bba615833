import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "@vance/adapters";
import { SqliteStateStore } from "@vance/adapters/sqlite";
import { type StateStore, StoreUnavailableError } from "@vance/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { testApp } from "./support/app";
import { projectClient } from "./support/client";

// Issue 37 item 2: a write the object store took stands. When the state store cannot take its
// generation bump, the answer is still the write's (never a 5xx) and says the propagation is
// pending; the bump is resent until it lands, and then every instance reads the new document.

const TOOL = (text: string) =>
  `type: doc_lookup\ndescription: ${text}\nparameters:\n  path: documents/getting_started.md\n`;

const opened: SqliteStateStore[] = [];
afterEach(() => {
  for (const state of opened.splice(0)) state.close();
});

/** One SQLite state store whose generation bumps fail while `down.bumps` is set. */
function stateWithFailingBumps() {
  const inner = new SqliteStateStore(":memory:");
  opened.push(inner);
  const down = { bumps: false, refused: 0 };
  const state = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "bumpGeneration") {
        return async (marker: string) => {
          if (down.bumps) {
            down.refused++;
            throw new StoreUnavailableError("state store", "no answer within 3000 ms");
          }
          return target.bumpGeneration(marker);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as StateStore;
  return { state, down };
}

describe("a write whose generation bump fails is answered as stored, and reaches every instance once the bump lands", () => {
  it("tool PUT and document DELETE: 2xx with X-Vance-Propagation: pending, then a second instance reads the new state", async () => {
    const { state, down } = stateWithFailingBumps();
    const dir = mkdtempSync(join(tmpdir(), "vance-honest-"));
    const documents = new FsObjectStore(join(dir, "documents"));
    const a = await testApp({ state, documents });
    const b = await testApp({ state, documents });
    const clientA = await projectClient(a.app);
    const clientB = await projectClient(b.app);
    const description = async (client: typeof clientA) =>
      ((await client.call("GET", "/tools/honest")).body.config as { description: string }).description;
    const put = (client: typeof clientA, text: string) =>
      a.app.request(`${client.base}/tools/honest`, {
        method: "PUT",
        headers: { ...client.headers, "content-type": "application/yaml" },
        body: TOOL(text),
      });

    expect((await put(clientA, "First.")).status).toBe(201);
    // Instance b caches the first version under the current generation.
    expect(await description(clientB)).toBe("First.");

    down.bumps = true;
    const written = await put(clientA, "Second.");
    expect(written.status).toBe(200);
    expect(written.headers.get("x-vance-propagation")).toBe("pending");
    expect(((await written.json()) as { config: { description: string } }).config.description).toBe(
      "Second.",
    );
    expect(down.refused).toBe(1);
    // Resent in the background while the state store refuses it.
    await vi.waitFor(() => expect(down.refused).toBeGreaterThan(1));
    expect(a.services.generations.isPending("documents/acme/shop")).toBe(true);

    down.bumps = false;
    await vi.waitFor(() => expect(a.services.generations.isPending("documents/acme/shop")).toBe(false));
    expect(await description(clientB)).toBe("Second.");
    expect(await description(clientA)).toBe("Second.");

    // A delete the same way: 204 and pending, then gone on b.
    down.bumps = true;
    const deleted = await a.app.request(`${clientA.base}/tools/honest`, {
      method: "DELETE",
      headers: clientA.headers,
    });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get("x-vance-propagation")).toBe("pending");
    down.bumps = false;
    await vi.waitFor(() => expect(a.services.generations.isPending("documents/acme/shop")).toBe(false));
    expect((await clientB.call("GET", "/tools/honest")).status).toBe(404);

    // A write whose bump lands says nothing of propagation.
    const plain = await put(clientA, "Third.");
    expect(plain.status).toBe(201);
    expect(plain.headers.get("x-vance-propagation")).toBeNull();
  });
});
