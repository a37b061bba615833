// The SQLite adapters, apart from the package index so a Lambda bundle never loads the native module.
export * from "./secret-store/sqlite";
export * from "./state-store/sqlite/index";
