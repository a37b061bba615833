import { afterAll } from "vitest";
import { closeTestApps } from "../support/app";

// Every test file's apps stop their script threads when the file ends.
afterAll(closeTestApps);
