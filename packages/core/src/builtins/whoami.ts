import type { BuiltInTool } from "../calls/built-in-tool";
import { NO_INPUT_SCHEMA } from "../tool-types/inputs";

/** `whoami`: tells the model which tenant, project, process and role it acts for. */
export const whoami: BuiltInTool = {
  name: "whoami",
  description: "Returns the tenant, project, process and role this call runs in.",
  labels: ["identity"],
  primary: false,
  inputSchema: NO_INPUT_SCHEMA,
  async invoke(_input, caller) {
    return {
      value: {
        tenant: caller.tenant,
        project: caller.project,
        processId: caller.processId ?? null,
        role: caller.role ?? null,
      },
    };
  },
};
