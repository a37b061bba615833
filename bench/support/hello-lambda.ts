import { Hono } from "hono";
import { handle } from "hono/aws-lambda";

/** The baseline of bench/cold-start.ts: a bare Hono app on Lambda, answering health. */
export const handler = handle(new Hono().get("/v1/health", (c) => c.json({ status: "ok" })));
