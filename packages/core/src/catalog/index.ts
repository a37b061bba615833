export * from "./catalog-editor";
export * from "./catalog-file";
export * from "./model-catalog";
export * from "./model-catalog-service";
export * from "./model-picker";
export * from "./observed-tool-limits";
export * from "./tool-budget";
