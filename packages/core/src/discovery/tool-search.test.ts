import { describe, expect, it } from "vitest";
import type { SurfaceTool } from "../surface/classify";
import { searchTerms, ToolSearchIndex } from "./tool-search";

const tool = (
  name: string,
  description: string,
  properties: string[] = [],
  family?: string,
): SurfaceTool => ({
  name,
  description,
  inputSchema: {
    type: "object",
    properties: Object.fromEntries(properties.map((p) => [p, { type: "string" }])),
  },
  origin: "configured",
  primary: false,
  defaultDeferred: true,
  ...(family ? { family } : {}),
});

const TOOLS = [
  tool("gh__issues_create_comment", "Create an issue comment", ["owner", "repo", "issue_number"], "issues"),
  tool(
    "gh__pulls_create_review_comment",
    "Create a review comment for a pull request",
    ["pull_number"],
    "pulls",
  ),
  tool("gh__repos_create_commit_comment", "Create a commit comment", ["commit_sha"], "repos"),
  tool("gh__issues_list_for_repo", "List repository issues", ["owner", "repo"], "issues"),
  tool("weather_get", "The weather at a place", ["city"]),
];

describe("ToolSearchIndex (BM25 over names, families, parameters, descriptions)", () => {
  it("ranks the tool whose words match best first, and leaves out what matches nothing", () => {
    const index = new ToolSearchIndex(TOOLS);
    const hits = index.search("create an issue comment", 5);
    expect(hits[0]?.name).toBe("gh__issues_create_comment");
    expect(hits.map((hit) => hit.name)).not.toContain("weather_get");
    expect(index.search("weather in a city", 3).map((hit) => hit.name)).toEqual(["weather_get"]);
    expect(index.search("teleport", 3)).toEqual([]);
  });

  it("words: camelCase and snake_case split, stop words out, plurals folded", () => {
    expect(searchTerms("listIssues for the repositories")).toEqual(["list", "issue", "repository"]);
  });
});
