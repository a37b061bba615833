export * from "./logger";
export * from "./object-store";
export * from "./secret-store";
export * from "./state-store";
export * from "./tool-runtime";
