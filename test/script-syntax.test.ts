import { parseToolDocument, scriptSyntaxProblem } from "@vance/core";
import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule, RELEASE_SYNC } from "quickjs-emscripten";
import { beforeAll, describe, expect, it } from "vitest";
import { lintRegistry } from "../packages/cli/src/lint";
import { testApp } from "./support/app";
import { token } from "./support/ui-project";

const T = "/v1/tenants/acme/projects/syntax";

/** Scripts as tools hold them: the last expression is the result, inputs are globals. */
const SCRIPTS = [
  "a + b",
  "a +",
  "const x = 1; x * 2",
  "let s = `t${a}`; s",
  "({ total: a + b })",
  "{ total: a + b }",
  "return a",
  "await a",
  "import x from 'y'",
  "function f() { return 1 } f()",
  "class A { #p = 1; get p() { return this.#p } } new A().p",
  "a?.b ?? c",
  "x ||= 1",
  "/[a-z]+/u.test(a)",
  "/(?<y>\\d{4})/.exec(a)",
  "/(/.test(a)",
  "let let = 1",
  "if (a) {",
  "a)",
  "'unclosed",
  "[1, 2, 3].at(-1)",
  "1_000_000 + 0x_1",
  "var yield = 1; yield",
  "with (a) b",
  "'use strict'; with (a) b",
  "async () => { await 1 }",
  "for (const v of a) { v }",
  "label: for (;;) { break label }",
  "break",
  "new.target",
  "const { a: x, ...rest } = o; rest",
];

let quickjs: QuickJSWASMModule;

beforeAll(async () => {
  quickjs = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
});

/** Whether QuickJS itself compiles `source` as the sandbox evaluates it (a global script), running nothing. */
function quickjsCompiles(source: string): boolean {
  const context = quickjs.newContext();
  try {
    const result = context.evalCode(source, "script.js", { type: "global", compileOnly: true });
    const ok = result.error === undefined;
    (result.error ?? result.value).dispose();
    return ok;
  } finally {
    context.dispose();
  }
}

describe("scripts are compiled, never run, on write and by lint", () => {
  it("agrees with QuickJS on which scripts compile", () => {
    const disagree = SCRIPTS.filter(
      (source) => quickjsCompiles(source) !== (scriptSyntaxProblem(source) === null),
    );
    expect(disagree).toEqual([]);
    expect(SCRIPTS.filter((source) => !quickjsCompiles(source)).length).toBeGreaterThan(8);
  });

  it("points a syntax error of an inline source at its line in the document", () => {
    const text =
      "type: scripted\ndescription: Adds\nparameters:\n  inputs: [{ name: a, type: number }]\n  source: |\n    const b = 1;\n    a +\n";
    const result = parseToolDocument(text, "adds", lintRegistry());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("validation_failed");
    expect(result.error.errors).toEqual([
      {
        path: "parameters.source",
        message: "the script does not compile: Unexpected token (line 3, column 1)",
        line: 8,
      },
    ]);
  });

  it("refuses `source: a +` with 422 and its line, and a scripts/ document that does not compile", async () => {
    const { app } = await testApp();
    const auth = { authorization: `Bearer ${await token("acme", ["read", "write"])}` };
    const tool = await app.request(`${T}/tools/adds`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/yaml" },
      body: "type: scripted\ndescription: Adds\nparameters:\n  inputs: [{ name: a, type: number }]\n  source: a +\n",
    });
    expect(tool.status).toBe(422);
    const problem = (await tool.json()) as {
      code: string;
      errors: { path: string; message: string; line: number }[];
    };
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors).toEqual([
      expect.objectContaining({
        path: "parameters.source",
        line: 5,
        message: expect.stringContaining("does not compile"),
      }),
    ]);
    const script = await app.request(`${T}/documents/scripts/sum.js`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/javascript" },
      body: "const total = a + b;\ntotal +\n",
    });
    expect(script.status).toBe(422);
    expect(((await script.json()) as { errors: { line: number }[] }).errors[0]?.line).toBe(3);
    const good = await app.request(`${T}/documents/scripts/sum.js`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/javascript" },
      body: "a + b\n",
    });
    expect(good.status).toBe(201);
  });

  it("runs nothing, and refuses nesting deeper than the parser's stack instead of crashing", () => {
    // An endless loop is a valid script: compiling it must not run it.
    expect(scriptSyntaxProblem("while (true) {}")).toBeNull();
    expect(scriptSyntaxProblem(`${"(".repeat(200_000)}1${")".repeat(200_000)}`)?.message).toMatch(
      /nests too deeply|stack space/,
    );
  });
});
