/** @jsxImportSource hono/jsx */
import {
  assertProjectId,
  assertTenantId,
  catalogView,
  Errors,
  invocableToolNameProblem,
  VanceError,
} from "@vance/core";
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { authorise, type Caller, type Need, publicBase } from "../auth";
import { BearerError } from "../identity/challenge";
import { PROCESSES_REACH } from "../identity/claims";
import { problemResponse } from "../problem";
import { REPLACE_SESSION_HEADER, UI_SCRIPT, UI_STYLES } from "./assets";
import {
  ErrorPage,
  ModelPage,
  PickerPage,
  type ProblemView,
  ProjectPage,
  type ProjectRef,
  projectHref,
  SignInPage,
  ToolPage,
  type Viewer,
} from "./pages";
import { listing, modelView, toolDetails, type UiServices } from "./views";

export type { UiServices } from "./views";

/** The listing's session cookie: sent only to `/ui/`, never readable by scripts, never cross-site. */
export const SESSION_COOKIE = "vance_ui";
/** A session lasts at most an hour, and never longer than the token it was minted from. */
export const SESSION_SECONDS = 3600;

/** No inline script or style, nothing from elsewhere, no framing. */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

type Element = Promise<string> | string | { toString(): string | Promise<string> };

async function render(c: Context, status: number, page: Element): Promise<Response> {
  return c.html(`<!DOCTYPE html>${await page}`, status as ContentfulStatusCode);
}

const unauthenticated = (detail: string) => new BearerError(401, detail, undefined);

/** The project a page is about, with its ids checked first (400 `invalid_id`, as the API). */
function projectOf(c: Context): ProjectRef {
  const tenant = c.req.param("tenant") ?? "";
  const project = c.req.param("project") ?? "";
  assertTenantId(tenant);
  assertProjectId(project);
  return { tenant, project };
}

/**
 * The read-only web listing under `/ui/` (API.md "Web listing"), rendered on the server.
 *
 * Authentication: the page's script moves `#token=<jwt>` into session storage and posts it once
 * as a bearer header to `POST /ui/session`, which answers a cookie holding a new token minted
 * from it — `read` only, at most an hour, never past the original's `exp`, of the listing's own
 * audience (which `/v1` refuses); HttpOnly, `SameSite=Strict`, `Path=/ui`. Pages check it with the
 * API's own rule (`authorise`), so another tenant's page is the same 403 `forbidden`. CSRF: the
 * pages only read; the session route needs the bearer header (which no cross-site form can send),
 * refuses other sites' fetches, and answers 409 `session_conflict` rather than replace a session
 * for another tenant unless the user confirmed it (a planted `#token=` link).
 */
export function uiRoutes(services: UiServices) {
  const { verifier } = services;
  const resourceOf = (c: Context) => `${publicBase(c, verifier.publicUrl)}/ui`;
  const ui = new Hono();
  const log = (fields: Record<string, unknown>) => services.logger.warn("http.error", fields);

  // One mapping of failures to problems (problem.ts); pages show them as HTML with the same status.
  // A refused page still says who is signed in (a 403 is another tenant's page, not "signed out").
  ui.onError(async (error, c) => {
    const response = problemResponse(error, log);
    if (c.req.method !== "GET") return response;
    const problem = (await response.json()) as ProblemView;
    if (problem.status === 401) return render(c, 401, <SignInPage problem={problem} />);
    const viewer = await signedIn(c);
    return render(
      c,
      problem.status,
      <ErrorPage problem={problem} viewer={viewer} session={viewer ? "ok" : "missing"} />,
    );
  });

  ui.use("*", async (c, next) => {
    await next();
    c.res.headers.set("content-security-policy", UI_CSP);
    if (!c.req.path.startsWith("/ui/assets/")) c.res.headers.set("cache-control", "no-store");
  });

  ui.get("/assets/ui.js", (c) =>
    c.body(UI_SCRIPT, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=300",
    }),
  );
  ui.get("/assets/ui.css", (c) =>
    c.body(UI_STYLES, 200, {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=300",
    }),
  );

  /** The session's caller, allowed what `need` says; 401 without a session. */
  const sessionOf = async (c: Context, need: Need = {}): Promise<Caller> => {
    const token = getCookie(c, SESSION_COOKIE);
    if (!token) throw unauthenticated("no listing session: open the listing with #token=<jwt>");
    return authorise(
      verifier,
      token,
      { ...need, role: "read" },
      { audience: "listing", resource: resourceOf(c) },
    );
  };
  const viewerOf = (c: Context, at?: ProjectRef): Promise<Viewer> => sessionOf(c, at ?? {});

  ui.post("/session", async (c) => {
    const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    if (!match) throw unauthenticated("a bearer token is required (Authorization: Bearer <jwt>)");
    const site = c.req.header("sec-fetch-site");
    if (site !== undefined && site !== "same-origin") {
      throw new VanceError("forbidden", "a listing session is started by the listing's own pages");
    }
    const caller = await authorise(
      verifier,
      match[1]!,
      { role: "read" },
      { audience: "api", resource: resourceOf(c) },
    );
    if (caller.reach === PROCESSES_REACH) {
      throw new BearerError(
        403,
        "the token is limited to processes (reach 'processes'); the web listing needs a token that reads the project",
        "insufficient_scope",
        `${caller.scopePrefix}read`,
      );
    }
    // A session that no longer verifies (expired) is no session to protect.
    const current = await sessionOf(c).catch((error: unknown) => {
      if (error instanceof BearerError) return undefined;
      throw error;
    });
    if (current && current.tenant !== caller.tenant && c.req.header(REPLACE_SESSION_HEADER) !== "true") {
      const named = (tenant: string) => (tenant === "*" ? "all tenants" : `tenant '${tenant}'`);
      throw new VanceError(
        "session_conflict",
        `the listing is signed in for ${named(current.tenant)}; this token is for ${named(caller.tenant)}. Replace the session only if you opened this link yourself`,
        [],
        { signedIn: current.tenant, offered: caller.tenant },
      );
    }
    const ttlSeconds = Math.min(SESSION_SECONDS, caller.expiresAt - verifier.nowSeconds());
    if (ttlSeconds <= 0) throw unauthenticated("the token is about to expire");
    const { tenant, project } = caller;
    const token = await verifier.mintSession(
      { tenant, roles: ["read"], ...(project === undefined ? {} : { project }) },
      ttlSeconds,
    );
    setCookie(c, SESSION_COOKIE, token, {
      path: "/ui",
      httpOnly: true,
      sameSite: "Strict",
      secure: new URL(c.req.url).protocol === "https:",
      maxAge: ttlSeconds,
    });
    return c.body(null, 204);
  });

  ui.delete("/session", (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: "/ui" });
    return c.body(null, 204);
  });

  /** The session's viewer whatever the page, or undefined without a valid session. */
  const signedIn = (c: Context): Promise<Viewer | undefined> => sessionOf(c).catch(() => undefined);

  // The start page is `/ui/`; a mounted app's "/" is `/ui` alone, so the slash is matched below.
  ui.get("/", (c) => c.redirect("/ui/", 301));
  const start = async (c: Context) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (!token) return render(c, 200, <SignInPage />);
    const viewer = await viewerOf(c);
    // A tenant's viewer sees its projects; a platform viewer those of the tenant it names.
    const tenant = viewer.tenant === "*" ? c.req.query("tenant") || undefined : viewer.tenant;
    if (tenant === undefined) return render(c, 200, <PickerPage viewer={viewer} />);
    assertTenantId(tenant);
    // A viewer limited to one project sees that project's name only, not the tenant's others.
    const listed =
      viewer.project === undefined
        ? await services.documents.projects(tenant)
        : { tenant, projects: [viewer.project], tenantLayer: false, truncated: false };
    return render(c, 200, <PickerPage viewer={viewer} listed={listed} />);
  };

  ui.get("/open", (c) => {
    const tenant = c.req.query("tenant") ?? "";
    const project = c.req.query("project") ?? "";
    assertTenantId(tenant);
    assertProjectId(project);
    return c.redirect(projectHref({ tenant, project }), 303);
  });

  ui.get("/tenants/:tenant/projects/:project", async (c) => {
    const at = projectOf(c);
    const viewer = await viewerOf(c, at);
    const label = c.req.query("label") || undefined;
    const { items, roles } = await listing(services, at, label);
    return render(c, 200, <ProjectPage viewer={viewer} at={at} items={items} label={label} roles={roles} />);
  });

  ui.get("/tenants/:tenant/projects/:project/tools/:name", async (c) => {
    const at = projectOf(c);
    const name = c.req.param("name");
    const problem = invocableToolNameProblem(name);
    if (problem) throw Errors.invalidId("tool name", name, problem);
    const viewer = await viewerOf(c, at);
    const details = await toolDetails(services, at, name);
    return render(c, 200, <ToolPage viewer={viewer} at={at} name={name} {...details} />);
  });

  ui.get("/tenants/:tenant/projects/:project/model", async (c) => {
    const at = projectOf(c);
    const viewer = await viewerOf(c, at);
    const query = { models: c.req.query("models") ?? "", recipe: c.req.query("recipe") ?? "" };
    // The page's one snapshot (its one read of the generations): the catalog and the model view share it.
    const snapshot = await services.tools.snapshot(at.tenant, at.project);
    const known = catalogView(await snapshot.catalog.catalog()).providers.map((provider) => ({
      instance: provider.instance,
      maxTools: provider.maxTools,
      models: provider.models.map((model) => `${provider.instance}/${model.slug}`),
    }));
    const props = { viewer, at, query, catalog: known };
    if (query.models.trim() === "") return render(c, 200, <ModelPage {...props} />);
    try {
      return render(c, 200, <ModelPage {...props} view={await modelView(services, snapshot, query)} />);
    } catch (error) {
      if (!(error instanceof VanceError) || error.status >= 500) throw error;
      const problem = { status: error.status, code: error.code, detail: error.message, errors: error.errors };
      return render(c, error.status, <ModelPage {...props} problem={problem} />);
    }
  });

  ui.get("*", (c) => {
    if (c.req.path === "/ui/") return start(c);
    throw new VanceError("not_found", "no such page of the listing");
  });

  return ui;
}
