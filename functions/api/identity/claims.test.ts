import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { issuerClaims, localClaims } from "./claims";
import { IssuerSchema } from "./issuers";

const issuer = (settings: Record<string, unknown> = {}) =>
  v.parse(IssuerSchema, { issuer: "https://idp.example", audience: "vance", ...settings });

describe("issuerClaims: what an issuer's token grants", () => {
  it("reads grants from 'scope' (a string) and 'scp' (a list, as Entra ID and Okta send it), prefixed only", () => {
    expect(issuerClaims({ scope: "openid read vance:read vance:tenant:acme" }, issuer())).toEqual({
      tenant: "acme",
      roles: ["read"],
    });
    expect(
      issuerClaims(
        { scp: ["vance:write", "vance:admin", "vance:tenant:acme", "vance:project:shop"] },
        issuer(),
      ),
    ).toEqual({ tenant: "acme", roles: ["write", "admin"], project: "shop" });
    expect(issuerClaims({ scope: "vance:read vance:processes vance:tenant:acme" }, issuer())).toMatchObject({
      reach: "processes",
    });
  });

  it("reads tenant, project and roles from the configured claims, with the issuer's prefix", () => {
    const cognito = issuer({
      tenantClaim: "custom:tenant",
      projectClaim: "custom:project",
      rolesClaim: "groups",
      scopePrefix: "vance-",
    });
    expect(
      issuerClaims(
        { "custom:tenant": "acme", "custom:project": "web", groups: "vance-read vance-write admins" },
        cognito,
      ),
    ).toEqual({ tenant: "acme", roles: ["read", "write"], project: "web" });
    // With a tenant claim configured, a tenant scope does not count.
    expect(() => issuerClaims({ scope: "vance-tenant:acme", groups: ["vance-read"] }, cognito)).toThrow(
      "the token names no tenant (claim 'custom:tenant')",
    );
  });

  it("refuses a token naming no tenant, two tenants, or ids the service does not accept", () => {
    expect(() => issuerClaims({ scope: "vance:read" }, issuer())).toThrow(
      "the token names no tenant (scope 'vance:tenant:<tenant>')",
    );
    expect(() => issuerClaims({ scope: "vance:tenant:acme vance:tenant:globex" }, issuer())).toThrow(
      "the token names 2 tenants (scope 'vance:tenant:<tenant>'); it must name one",
    );
    expect(() => issuerClaims({ scope: "vance:tenant:Not_An_Id" }, issuer())).toThrow(
      "the token's tenant 'Not_An_Id' is not a valid tenant id",
    );
    expect(() => issuerClaims({ scope: "vance:tenant:acme vance:project:../x" }, issuer())).toThrow(
      "the token's project '../x' is not a valid project id",
    );
    expect(() => issuerClaims({ scope: `vance:tenant:${"a".repeat(300)}` }, issuer())).toThrow(
      /\.\.\.' is not a valid/,
    );
  });

  it("grants no role a token does not name, and ignores values that are not strings", () => {
    expect(
      issuerClaims({ scope: "vance:tenant:acme", groups: [1, { a: 2 }] }, issuer({ rolesClaim: "groups" })),
    ).toEqual({
      tenant: "acme",
      roles: [],
    });
  });
});

describe("localClaims: what one of the service's own tokens grants", () => {
  it("takes tenant, roles, project and reach, and refuses anything else in their place", () => {
    expect(
      localClaims({ tenant: "acme", roles: ["read"], project: "shop", reach: "processes", exp: 1 }),
    ).toEqual({
      tenant: "acme",
      roles: ["read"],
      project: "shop",
      reach: "processes",
    });
    expect(() => localClaims({ tenant: "acme", roles: ["root"] })).toThrow(
      "lacks valid 'tenant' and 'roles'",
    );
    expect(() => localClaims({ tenant: "acme", roles: ["read"], reach: "everything" })).toThrow();
  });
});
