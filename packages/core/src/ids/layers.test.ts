import { describe, expect, it } from "vitest";
import { innermostFirst, layerProjectsOf, readLayersOf } from "./layers";

describe("which stored layers a request for a project reads, spelled once", () => {
  it("a project reads its own layer and the tenant's; _tenant reads the tenant layer once", () => {
    const seen: string[] = [];
    const layers = readLayersOf("shop", (layerProject) => {
      seen.push(layerProject);
      return `acme/${layerProject}/`;
    });
    expect(layers).toEqual({ project: "acme/shop/", tenant: "acme/_tenant/" });
    expect(seen).toEqual(["shop", "_tenant"]);

    seen.length = 0;
    const tenantOnly = readLayersOf("_tenant", (layerProject) => {
      seen.push(layerProject);
      return layerProject.length;
    });
    expect(tenantOnly).toEqual({ project: null, tenant: "_tenant".length });
    expect(seen).toEqual(["_tenant"]);
  });

  it("lists the layers innermost first, as the folders a request's generations cover", () => {
    expect(innermostFirst(readLayersOf("shop", (p) => p))).toEqual(["shop", "_tenant"]);
    expect(innermostFirst(readLayersOf("_tenant", (p) => p))).toEqual(["_tenant"]);
    expect(layerProjectsOf("shop")).toEqual(["shop", "_tenant"]);
    expect(layerProjectsOf("_tenant")).toEqual(["_tenant"]);
  });
});
