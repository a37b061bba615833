import { VanceError } from "@vance/core";
import { createMiddleware } from "hono/factory";

/** What `HOST` may say for the local server to be reachable from this machine only. */
const LOOPBACK_ADDRESS = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * The `Host` headers a loopback-bound server answers (MCP "Streamable HTTP", security warning):
 * `localhost`, `127.0.0.1` or `[::1]`, any port. Matched whole — `evil.example@127.0.0.1` is no host.
 */
const LOOPBACK_HOST_HEADER = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;

/** Whether the local server's `HOST` setting binds it to the loopback interface. */
export function isLoopbackAddress(host: string): boolean {
  return LOOPBACK_ADDRESS.test(host.trim());
}

/** How the MCP endpoints judge requests that a browser may have sent. */
export interface BrowserGuardSettings {
  /** Origins (`scheme://host[:port]`) that may call (besides its own, on a loopback-bound server). */
  readonly allowedOrigins: readonly string[];
  /** The server listens on loopback only: the `Host` header must name loopback (DNS rebinding). */
  readonly loopbackOnly: boolean;
}

/**
 * Refuses (403) what a web page could make a browser send to an MCP endpoint: on a loopback-bound
 * server, where a rebinding DNS name is the attack, a `Host` that is not loopback; and an `Origin`
 * that is not listed — nor, on a loopback-bound server, the server's own (elsewhere a rebound
 * name would be its "own" too). Requests without `Origin` come from programs, not pages, and pass.
 */
export function browserGuard(settings: BrowserGuardSettings) {
  return createMiddleware(async (c, next) => {
    const refusal = browserRefusal(
      settings,
      c.req.header("host") ?? new URL(c.req.url).host,
      c.req.header("origin"),
    );
    if (refusal) throw refusal;
    await next();
  });
}

/**
 * What {@link browserGuard} refuses of a request with this `Host` (the header, else the URL's) and
 * `Origin`, or undefined when it passes: the one rule of the Hono routes and the fast route
 * (`fast-mcp.ts`).
 */
export function browserRefusal(
  settings: BrowserGuardSettings,
  host: string,
  origin: string | undefined,
): VanceError | undefined {
  if (settings.loopbackOnly && !LOOPBACK_HOST_HEADER.test(host)) {
    return new VanceError(
      "host_not_allowed",
      "this server listens on loopback only: the Host header must be localhost, 127.0.0.1 or [::1]",
    );
  }
  const ownOrigin =
    settings.loopbackOnly && origin !== undefined && originHost(origin) === host.toLowerCase();
  if (origin !== undefined && !settings.allowedOrigins.includes(origin) && !ownOrigin) {
    return new VanceError(
      "origin_not_allowed",
      `the origin '${origin.slice(0, 100)}' may not call this server (VANCE_MCP_ALLOWED_ORIGINS)`,
    );
  }
  return undefined;
}

/** The `host[:port]` of an `Origin` header, or null for `null` and anything unparsable. */
function originHost(origin: string): string | null {
  if (!URL.canParse(origin)) return null;
  const url = new URL(origin);
  return url.origin === "null" ? null : url.host;
}
