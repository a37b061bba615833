import { describe, expect, it } from "vitest";
import { createNetworkPolicy } from "../net/network-policy";
import { mcpServerNameFromPath, parseMcpServerDocument } from "./mcp-server";

const environment = { networkPolicy: createNetworkPolicy([]) };

function errorsOf(text: string, env = environment) {
  const result = parseMcpServerDocument(text, env);
  if (result.ok) throw new Error("expected the document to be refused");
  expect([result.error.code, result.error.status]).toEqual(["validation_failed", 422]);
  return result.error.errors;
}

describe("parseMcpServerDocument (mcp-servers/{name}.yaml)", () => {
  it("fills the defaults of a minimal document", () => {
    expect(parseMcpServerDocument("url: https://mcp.example.com/mcp\n", environment)).toEqual({
      ok: true,
      server: { url: "https://mcp.example.com/mcp", headers: {}, timeoutMs: 10_000 },
    });
  });

  it("keeps ${secret:NAME} in header values for the call to fill", () => {
    const result = parseMcpServerDocument(
      "url: https://mcp.example.com/mcp\nheaders:\n  Authorization: Bearer ${secret:MCP_TOKEN}\ntimeoutMs: 2500\n",
      environment,
    );
    expect(result).toMatchObject({
      ok: true,
      server: { headers: { Authorization: "Bearer ${secret:MCP_TOKEN}" }, timeoutMs: 2500 },
    });
  });

  it("points each problem at its field and line", () => {
    const errors = errorsOf("url: ftp://files.example.com\ntimeoutMs: 50\nretries: 3\n");
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "url", line: 1 }),
        expect.objectContaining({ path: "timeoutMs", line: 2, message: "timeoutMs must be at least 100" }),
        expect.objectContaining({ path: "retries", line: 3 }),
      ]),
    );
    expect(errorsOf("url: https://x.example\ntimeoutMs: 120001\n")).toEqual([
      expect.objectContaining({ path: "timeoutMs", message: "timeoutMs must be at most 120000" }),
    ]);
  });

  it("refuses a literal internal address unless the allowlist names it; host names wait for the connect", () => {
    expect(errorsOf("url: http://169.254.169.254/mcp\n")).toEqual([
      expect.objectContaining({ path: "url", message: expect.stringContaining("metadata") }),
    ]);
    expect(errorsOf("url: http://[::1]:8080/mcp\n")[0]?.message).toContain("loopback");
    const allowing = { networkPolicy: createNetworkPolicy(["127.0.0.1"]) };
    expect(parseMcpServerDocument("url: http://127.0.0.1:3001/mcp\n", allowing).ok).toBe(true);
    expect(parseMcpServerDocument("url: http://localhost:3001/mcp\n", environment).ok).toBe(true);
  });

  it("refuses headers the transport sets, bad header names and values, bad secret names and URL credentials", () => {
    expect(errorsOf("url: https://x.example\nheaders:\n  Mcp-Session-Id: abc\n")[0]).toMatchObject({
      path: "headers.Mcp-Session-Id",
      message: expect.stringContaining("set by the MCP transport"),
    });
    expect(errorsOf('url: https://x.example\nheaders:\n  "bad name": x\n')[0]?.path).toBe("headers.bad name");
    expect(errorsOf('url: https://x.example\nheaders:\n  X-A: "one\\ntwo"\n')[0]?.path).toBe("headers.X-A");
    expect(errorsOf("url: https://x.example\nheaders:\n  X-Key: ${secret:lower_case}\n")[0]).toMatchObject({
      path: "headers.X-Key",
      line: 3,
    });
    expect(errorsOf("url: https://user:pw@x.example/mcp\n")[0]?.message).toContain("credentials");
  });

  it("refuses YAML that is no mapping, and broken YAML with its line", () => {
    expect(errorsOf("- url\n")[0]?.message).toContain("mapping");
    expect(errorsOf("url: [\n")[0]?.line).toBeGreaterThan(0);
  });
});

describe("mcpServerNameFromPath", () => {
  it("answers the name of mcp-servers/{name}.yaml for valid server names only", () => {
    expect(mcpServerNameFromPath("mcp-servers/github.yaml")).toBe("github");
    for (const path of [
      "mcp-servers/GitHub.yaml",
      "mcp-servers/a/b.yaml",
      "mcp-servers/x.json",
      "docs/x.yaml",
    ])
      expect(mcpServerNameFromPath(path)).toBeNull();
  });
});
