#!/usr/bin/env node
// The CLI is TypeScript like the rest of the workspace (its rules come from @vance/core's sources):
// tsx compiles it on load, so `npm install` is all it needs.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
