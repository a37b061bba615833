/**
 * An OpenTelemetry context manager that follows the active context through promises only, with
 * V8's promise hooks (`node:v8` `promiseHooks`): a promise remembers the context it was made
 * in, and its reactions (every `await`'s continuation, every `then` callback) run in it.
 *
 * Why not `AsyncLocalStorageContextManager`: on Node 20 (and 22 without
 * `--experimental-async-context-frame`) AsyncLocalStorage runs on async_hooks, which, once
 * enabled, give every promise and every native callback of the process an async id, a resource
 * lookup and a hook dispatch. On the warm manifest (168 promises a request) that alone added
 * ~67 µs of CPU (~7% of the request over HTTP); these hooks store one property and swap one
 * variable (tracing with the no-op exporter: 73–98 → 45–64 µs; README, Operating).
 *
 * What it does not follow: callbacks of timers, emitters and sockets run in the context of
 * whatever runs them (the root context, at the top of the event loop), not the one they were
 * scheduled in. The service's spans start from promise chains; the one callback path that
 * starts spans, a sandbox worker's message asking for a sibling call, is bound explicitly
 * (`tracedScripts` → `context.bind`). Where AsyncLocalStorage needs no hooks (Node 24, or 22
 * with `--experimental-async-context-frame`), `startTelemetry` uses it instead.
 */
import { promiseHooks } from "node:v8";
import { type Context, type ContextManager, ROOT_CONTEXT } from "@opentelemetry/api";

const CONTEXT = Symbol("vance.otel.context");

type Carrier = { [CONTEXT]?: Context };

export class PromiseContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  /** The contexts interrupted by the promise reactions running now, innermost last. */
  private readonly interrupted: Context[] = [];
  private stopHooks: (() => void) | undefined;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const manager = this;
    const fn = target as (...args: unknown[]) => unknown;
    return function bound(this: unknown, ...args: unknown[]) {
      return manager.with(context, fn, this, ...args);
    } as T;
  }

  enable(): this {
    if (this.stopHooks) return this;
    // Typed `Function` by @types/node; it is the hooks' stop function.
    this.stopHooks = promiseHooks.createHook({
      init: (promise) => {
        (promise as Carrier)[CONTEXT] = this.current;
      },
      before: (promise) => {
        this.interrupted.push(this.current);
        this.current = (promise as Carrier)[CONTEXT] ?? ROOT_CONTEXT;
      },
      after: () => {
        this.current = this.interrupted.pop() ?? ROOT_CONTEXT;
      },
    }) as () => void;
    return this;
  }

  disable(): this {
    this.stopHooks?.();
    this.stopHooks = undefined;
    this.current = ROOT_CONTEXT;
    this.interrupted.length = 0;
    return this;
  }
}

/**
 * Whether AsyncLocalStorage runs on V8's continuation data instead of async_hooks here: by
 * default from Node 24, behind `--experimental-async-context-frame` on Node 22.
 */
export function asyncContextFrameOn(
  version: string = process.versions.node,
  flags: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)],
): boolean {
  if (flags.includes("--no-async-context-frame")) return false;
  const major = Number(version.split(".")[0]);
  return major >= 24 || (major >= 22 && flags.includes("--experimental-async-context-frame"));
}
