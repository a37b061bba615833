/// <reference path="./.sst/platform/config.d.ts" />

// Imports infra/*.ts and returns outputs; nothing else. Deploying is `npx sst deploy --stage <stage>`
// (README "Deploy"); `npm run check:infra` typechecks this file and infra/ against SST's types.
export default $config({
  app(input) {
    const production = input?.stage === "production";
    return {
      name: "vance-server-tools",
      // Production keeps its buckets and table when removed, and refuses `sst remove` outright.
      removal: production ? "retain" : "remove",
      protect: production,
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
