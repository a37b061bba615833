export * from "./ports/index";
