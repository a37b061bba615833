import { describe, expect, it } from "vitest";
import { type EmptyResponseReport, findPhantoms, findPhantomsYielding } from "./empty-response";

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

describe("findPhantomsYielding (megabytes of conversation, the event loop kept turning)", () => {
  it("finds the same phantoms as findPhantoms, names across slice boundaries included, and lets timers run meanwhile", async () => {
    // ~1.5 MiB of words; the phantoms sit at and around 64 Ki-character slice boundaries.
    const filler = Array.from({ length: 200_000 }, (_, i) => `w${i}`).join(" ");
    const at = 64 * 1024 - 4;
    const text = `${filler.slice(0, at)} file_read ${filler.slice(at, 3 * at)}jira_search ${filler.slice(3 * at)} whoami`;
    const big = report([{ role: "user", content: text }]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const found = await findPhantomsYielding(big, KNOWN);
    clearInterval(timer);
    expect(found).toEqual(findPhantoms(big, KNOWN));
    expect(found.candidates.map((candidate) => candidate.name)).toEqual(["file_read", "whoami"]);
    expect(ticks).toBeGreaterThan(5);
  });
});
