import type { ProcessKey, StateStore } from "@vance/core";

/**
 * The ends of `T/mcp` sessions, shared by every instance through the state store. A session is
 * its process (the `Mcp-Session-Id` is the process id); `DELETE` ends the session, not the
 * process record, which the state store keeps (it has no way to delete one). The end is a
 * counter that only ever grows, so "ended" is one small read and ending twice is harmless.
 */
export class McpSessions {
  constructor(private readonly state: Pick<StateStore, "bumpGeneration" | "getGenerations">) {}

  /** Marks the session of this process ended, for every instance. */
  async end(key: ProcessKey): Promise<void> {
    await this.state.bumpGeneration(endMarker(key));
  }

  /** Whether `end` was called for this process's session. */
  async ended(key: ProcessKey): Promise<boolean> {
    const [count] = await this.state.getGenerations([endMarker(key)]);
    return (count ?? 0) > 0;
  }
}

function endMarker(key: ProcessKey): string {
  return `mcp-session-ended/${key.tenant}/${key.project}/${key.processId}`;
}
