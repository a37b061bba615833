import { describe, expect, it } from "vitest";
import { searchDocument } from "./search-document";
import { buildSearchIndex, SearchIndex } from "./search-index";
import { actionOfOperation, searchTerms } from "./search-text";

/** A pack sub-tool as an OpenAPI operation makes it: name, summary, method and path, parameters. */
const op = (name: string, method: string, path: string, summary: string, parameters: string[] = []) =>
  searchDocument({
    name,
    description: summary,
    inputSchema: { type: "object", properties: Object.fromEntries(parameters.map((p) => [p, {}])) },
    pack: name.split("__")[0]!,
    method,
    path,
  });

const CATALOG = new SearchIndex(
  buildSearchIndex([
    op("gh__pulls_list", "GET", "/repos/{owner}/{repo}/pulls", "List pull requests", ["owner", "repo"]),
    op("gh__pulls_create", "POST", "/repos/{owner}/{repo}/pulls", "Create a pull request", ["owner", "repo"]),
    op("gh__pulls_get", "GET", "/repos/{owner}/{repo}/pulls/{pull_number}", "Get a pull request"),
    op("gh__pulls_merge", "PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", "Merge a pull request"),
    op("gh__repos_get", "GET", "/repos/{owner}/{repo}", "Get a repository"),
    op("gh__repos_delete", "DELETE", "/repos/{owner}/{repo}", "Delete a repository"),
    op(
      "gh__actions_get_repo_secret",
      "GET",
      "/repos/{owner}/{repo}/actions/secrets/{name}",
      "Get a repository secret",
    ),
    op("gh__issues_create", "POST", "/repos/{owner}/{repo}/issues", "Create an issue"),
    op("gh__issues_list_for_repo", "GET", "/repos/{owner}/{repo}/issues", "List repository issues"),
    op("jira__create_issue", "POST", "/rest/api/3/issue", "Create issue"),
    op("jira__get_issue", "GET", "/rest/api/3/issue/{issueIdOrKey}", "Get issue"),
    op("jira__delete_issue", "DELETE", "/rest/api/3/issue/{issueIdOrKey}", "Delete issue"),
    op("cloud__droplets_create", "POST", "/v2/droplets", "Create a New Droplet"),
    op("cloud__droplets_list", "GET", "/v2/droplets", "List All Droplets"),
    op("gh__users_get_authenticated", "GET", "/user", "Get the authenticated user"),
    op(
      "gh__actions_download_run_logs",
      "GET",
      "/repos/{owner}/{repo}/actions/runs/{run_id}/logs",
      "Download workflow run logs",
    ),
    op("chat__conversations_list", "GET", "/conversations.list", "Lists all channels in a team."),
    op(
      "chat__conversations_create",
      "POST",
      "/conversations.create",
      "Initiates a public or private channel-based conversation",
    ),
    op("chat__conversations_archive", "POST", "/conversations.archive", "Archives a conversation."),
    op(
      "chat__admin_conversations_archive",
      "POST",
      "/admin.conversations.archive",
      "Archive a public or private channel.",
    ),
    op("chat__conversations_members", "GET", "/conversations.members", "Retrieve members of a conversation."),
    op("chat__conversations_invite", "POST", "/conversations.invite", "Invites users to a channel."),
    op("gh__repositories_by_topic", "GET", "/search/repositories", "Repositories by topic"),
    op("gh__repos_list_for_org", "GET", "/orgs/{org}/repos", "List organization repositories"),
    op("gh__repos_list_for_user", "GET", "/users/{username}/repos", "List repositories for a user"),
    op("gh__users_list", "GET", "/users", "List users"),
    searchDocument({
      name: "weather_get",
      description: "The weather at a place",
      inputSchema: { properties: { city: {} } },
    }),
  ]),
);

const top = (query: string, limit = 3, allowed?: (name: string) => boolean) =>
  CATALOG.search(query, limit, allowed).map((hit) => hit.name);

describe("SearchIndex: what a user asking in plain words gets first", () => {
  it("a verb of the operation itself: 'merge a pull request' finds the merge, not the pull request", () => {
    expect(top("merge a pull request")[0]).toBe("gh__pulls_merge");
  });

  it("verb synonyms and the REST meaning of method + path: open is create, show is get, remove is delete", () => {
    expect(top("open a pull request")[0]).toBe("gh__pulls_create");
    expect(top("show me one pull request")[0]).toBe("gh__pulls_get");
    expect(top("see all pull requests")[0]).toBe("gh__pulls_list");
    expect(top("remove a repo")[0]).toBe("gh__repos_delete");
    expect(top("spin up a new server")[0]).toBe("cloud__droplets_create");
  });

  it("RPC-style paths say their action in the path (`/conversations.create`); a channel is a conversation", () => {
    expect(top("create a new channel")[0]).toBe("chat__conversations_create");
    expect(top("list every channel")[0]).toBe("chat__conversations_list");
    expect(top("archive an old channel")[0]).toBe("chat__conversations_archive");
  });

  it("phrases whose words mislead are read as what they name: logged in is the authenticated user, not logs", () => {
    expect(top("who am I logged in as")[0]).toBe("gh__users_get_authenticated");
    expect(top("which user am I")[0]).toBe("gh__users_get_authenticated");
  });

  it("a tool whose own name the query covers wins over a wider one that also matches: the channel's archive, not the admin's", () => {
    expect(top("archive an old channel")[0]).toBe("chat__conversations_archive");
    expect(top("archive a channel as an admin")[0]).toBe("chat__admin_conversations_archive");
  });

  it("'who' asks about people: who is in a channel lists its members", () => {
    expect(top("who is in this channel")[0]).toBe("chat__conversations_members");
  });

  it("a collection under a search segment is searched: 'find repositories' is the one under /search/, not a listing", () => {
    expect(actionOfOperation("GET", "/search/repositories")).toBe("search");
    expect(actionOfOperation("GET", "/orgs/{org}/repos")).toBe("list");
    expect(top("find repositories about compilers")[0]).toBe("gh__repositories_by_topic");
    expect(top("list the repositories of an organization")[0]).toBe("gh__repos_list_for_org");
  });

  it("the first verb is the action, a later one a thing: 'get the logs of a run' is not the authenticated user's get", () => {
    expect(top("download the logs of a workflow run")[0]).toBe("gh__actions_download_run_logs");
  });

  it("a pack the query names wins over another pack's tool, and its vocabulary maps (a Jira ticket is an issue)", () => {
    expect(top("create a Jira ticket")[0]).toBe("jira__create_issue");
    expect(top("file a bug in gh")[0]).toBe("gh__issues_create");
    expect(top("delete a jira ticket")[0]).toBe("jira__delete_issue");
  });

  it("an operation's own summary finds it first: 'Get a repository' is gh__repos_get, not the repository secret", () => {
    expect(top("Get a repository")[0]).toBe("gh__repos_get");
    expect(top("List All Droplets")[0]).toBe("cloud__droplets_list");
  });

  it("answers only tools the caller may use, and nothing for words no tool has", () => {
    expect(top("merge a pull request", 5, (name) => name !== "gh__pulls_merge")).not.toContain(
      "gh__pulls_merge",
    );
    expect(top("weather in a city")).toEqual(["weather_get"]);
    expect(top("teleport")).toEqual([]);
    expect(top("")).toEqual([]);
  });
});

describe("searchTerms", () => {
  it("splits camelCase, acronyms and snake_case, drops stop words, folds plurals and verb forms", () => {
    expect(searchTerms("listIssues for the repositories")).toEqual(["list", "issu", "repositori"]);
    expect(searchTerms("getHTTPServer merged merging merges")).toEqual([
      "get",
      "http",
      "server",
      "merg",
      "merg",
      "merg",
    ]);
    expect(searchTerms("create_pull_request")).toEqual(searchTerms("creating pull requests"));
  });
});
