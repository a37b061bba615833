export * from "./bundled";
export * from "./catalog-sync";
export * from "./json-logger";
export * from "./net/index";
export * from "./object-store/index";
export * from "./secret-store/index";
export * from "./state-store/index";
