import type { Context } from "hono";

/**
 * The named path parameters of a request, as strings. The route modules are mounted under
 * prefixes (`/v1/tenants/:tenant/projects/:project/…`) whose parameters Hono cannot type inside
 * the mounted app; this is the one place that reads them untyped. The app's id check
 * (`validIds`) has already refused a malformed tenant or project.
 */
export function pathParams<const K extends string>(c: Context, ...names: K[]): Record<K, string> {
  const values = {} as Record<K, string>;
  for (const name of names) {
    const value = c.req.param(name);
    if (value === undefined) throw new Error(`route has no :${name} parameter`);
    values[name] = value;
  }
  return values;
}
