export * from "./bundled";
export * from "./object-store/index";
export * from "./state-store/index";
