import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { expect } from "vitest";
import type { VanceApp } from "../../functions/api/app";
import { mintToken } from "../../functions/api/auth";
import { SECRET } from "./app";
import { projectClient } from "./client";

/** The project the listing tests show: `acme/web`. */
export const TENANT = "acme";
export const PROJECT = "web";
export const T = `/v1/tenants/${TENANT}/projects/${PROJECT}`;
export const TENANT_LAYER = `/v1/tenants/${TENANT}/projects/_tenant`;

/** Ten primary tools: more than a small model limit leaves room for, so some are demoted. */
export const PRIMARY_TOOLS = Array.from({ length: 10 }, (_, i) => `bulk_${String(i).padStart(2, "0")}`);

/** A three-operation OpenAPI document: the `pets` pack's sub-tools, read from the cascade (no network). */
const PETS_SPEC = `openapi: 3.1.0
info: { title: Pets, version: "1.0" }
servers: [{ url: https://pets.invalid/v1 }]
paths:
  /pets:
    get: { operationId: listPets, summary: List pets }
    post: { operationId: createPet, summary: Add a pet }
  /pets/{petId}:
    parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
    get: { operationId: getPetById, summary: One pet }
`;

export function token(tenant: string, roles: ("read" | "write" | "admin")[], ttl = 3600): Promise<string> {
  return mintToken(SECRET, { tenant, roles }, ttl);
}

async function put(app: VanceApp, path: string, body: string, writer: string): Promise<void> {
  const res = await app.request(path, {
    method: "PUT",
    headers: { authorization: `Bearer ${writer}`, "content-type": "application/yaml" },
    body,
  });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
}

/**
 * `acme/web` with something in every layer: `greeting` in the tenant layer and overridden by the
 * project, a disabled bundled tool, labelled tools, ten primary tools and the `pets` pack.
 */
export async function seedProject(app: VanceApp): Promise<void> {
  const writer = await token(TENANT, ["read", "write"]);
  const doc = (description: string, extra = "") =>
    `type: doc_lookup\ndescription: ${description}\n${extra}parameters: { path: documents/getting_started.md }\n`;
  await put(
    app,
    `${TENANT_LAYER}/tools/greeting`,
    doc("Greets, as the tenant wrote it", "labels: [tenant_wide]\n"),
    writer,
  );
  await put(
    app,
    `${T}/tools/greeting`,
    doc("Greets, as this project wrote it", "labels: [demo, web]\n"),
    writer,
  );
  await put(app, `${T}/tools/handbook`, doc("The team handbook", "labels: [docs]\n"), writer);
  await put(app, `${T}/tools/doc_tools_overview`, doc("Not here", "enabled: false\n"), writer);
  for (const name of PRIMARY_TOOLS) {
    await put(app, `${T}/tools/${name}`, doc(`Bulk tool ${name}`, "primary: true\nlabels: [bulk]\n"), writer);
  }
  await put(app, `${T}/documents/specs/pets.yaml`, PETS_SPEC, writer);
  await put(
    app,
    `${T}/tools/pets`,
    "type: openapi\ndescription: The pet store\nlabels: [pets]\nparameters:\n  spec: specs/pets.yaml\n  promptHint: Pets - list, add and read pets\n",
    writer,
  );
}

/** Waits until every pack of `acme/{project}` is `current`: see `currentListing`. */
export async function packsCurrent(app: VanceApp, project: string): Promise<void> {
  await (await projectClient(app, TENANT, project)).currentListing();
}

/** Serves the app on an ephemeral port of 127.0.0.1, as `npm start` serves it. */
export async function listen(app: VanceApp): Promise<{ base: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) => {
      resolve({
        base: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
  });
}

/** A project of long names: tools named with the full 64 characters a name may have, and a large pack. */
export const LONG_PROJECT = "long";
export const BIG_PACK_SIZE = 500;

/** A 64-character tool name, the longest the name rule allows. */
export function longName(i: number): string {
  return `${"tool_with_a_name_as_long_as_the_rules_allow_for_a_name_here_x"}_${String(i).padStart(2, "0")}`.slice(
    -64,
  );
}

/** `acme/long`: 30 deferred and 10 primary tools with 64-character names, and a 500-operation OpenAPI pack. */
export async function seedLongProject(app: VanceApp): Promise<void> {
  const writer = await token(TENANT, ["read", "write"]);
  const at = `/v1/tenants/${TENANT}/projects/${LONG_PROJECT}`;
  for (let i = 0; i < 40; i++) {
    await put(
      app,
      `${at}/tools/${longName(i)}`,
      `type: doc_lookup\ndescription: Long tool ${i}, with a description long enough to wrap across a line or two in a narrow column of the listing\n${i >= 30 ? "primary: true\n" : ""}parameters: { path: documents/getting_started.md }\n`,
      writer,
    );
  }
  const paths = Array.from(
    { length: BIG_PACK_SIZE },
    (_, i) =>
      `  /items/${i}:\n    get: { operationId: op_${String(i).padStart(3, "0")}, summary: Item ${i} }\n`,
  ).join("");
  await put(
    app,
    `${at}/documents/specs/big.yaml`,
    `openapi: 3.1.0\ninfo: { title: Big, version: "1.0" }\nservers: [{ url: https://big.invalid/v1 }]\npaths:\n${paths}`,
    writer,
  );
  await put(
    app,
    `${at}/tools/big`,
    "type: openapi\ndescription: A pack of many operations\nparameters:\n  spec: specs/big.yaml\n",
    writer,
  );
}
