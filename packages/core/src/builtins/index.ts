export * from "./built-in-tool";
export * from "./meta-tools";
export { whoami } from "./whoami";
