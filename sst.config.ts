/// <reference path="./.sst/platform/config.d.ts" />

// Imports infra/*.ts and returns outputs; nothing else. Deploying is `npx sst deploy --stage <stage>`.
export default $config({
  app(input) {
    return {
      name: "vance-server-tools",
      removal: input?.stage === "production" ? "retain" : "remove",
      home: "aws",
    };
  },
  async run() {
    const storage = await import("./infra/storage");
    const api = await import("./infra/api");
    await import("./infra/cron");
    await import("./infra/document-events");
    return {
      api: api.api.url,
      documents: storage.documents.name,
      catalog: storage.catalog.name,
      state: storage.state.name,
    };
  },
});
