import { describe, expect, it } from "vitest";
import { type EmptyResponseReport, findPhantoms } from "./empty-response";

const KNOWN = new Set(["doc_read", "file_read", "jira_search", "jira__create_issue", "tool_list", "whoami"]);

function report(messages: EmptyResponseReport["messages"], extra: Partial<EmptyResponseReport> = {}) {
  return { requestId: "r-1", messages, offeredTools: ["doc_read", "tool_list"], ...extra };
}

describe("findPhantoms (spec §13.2 candidate diff)", () => {
  it("a user asking for file_read when only doc_read was offered: phantom file_read, origin user", () => {
    const found = findPhantoms(
      report([
        { role: "system", content: "You help with documents." },
        { role: "user", content: "Please file_read the notes, or doc_read them." },
      ]),
      KNOWN,
    );
    expect(found).toEqual({ kind: "phantom", candidates: [{ name: "file_read", origin: "user" }] });
  });

  it("a recipe prompt teaching jira_search that was not offered: origin prompt, even when the user names it too", () => {
    const found = findPhantoms(
      report([
        { role: "system", content: "To find tickets, call jira_search with a JQL query." },
        { role: "user", content: "Find my jira_search results for ABC." },
      ]),
      KNOWN,
    );
    expect(found.candidates).toEqual([{ name: "jira_search", origin: "prompt" }]);
  });

  it("a name from an earlier assistant message or tool call: origin context", () => {
    const found = findPhantoms(
      report([
        { role: "user", content: "Open a ticket." },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ type: "function", function: { name: "jira__create_issue", arguments: "{}" } }],
        },
        { role: "tool", content: [{ type: "text", text: "use whoami first" }] },
      ]),
      KNOWN,
    );
    expect(found.candidates).toEqual([
      { name: "jira__create_issue", origin: "context" },
      { name: "whoami", origin: "context" },
    ]);
  });

  it("finishReason length is skipped; no candidate is blank; an unknown name or a longer token is no candidate", () => {
    const messages = [{ role: "user", content: "call file_read" }];
    expect(findPhantoms(report(messages, { finishReason: "length" }), KNOWN)).toEqual({
      kind: "skipped",
      candidates: [],
    });
    expect(
      findPhantoms(
        report([{ role: "user", content: "call my_file_read and made_up_tool, or doc_read" }]),
        KNOWN,
      ),
    ).toEqual({ kind: "blank", candidates: [] });
    expect(findPhantoms(report([{ role: "user", content: "" }]), KNOWN).kind).toBe("blank");
  });
});
