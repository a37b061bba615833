export * from "./built-in-tool";
export { whoami } from "./whoami";
