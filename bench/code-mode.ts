/**
 * Bench: code mode against direct tool calls on one multi-step task — fetch five records through
 * a `rest` tool from a local records server, keep the paid ones, sum their amounts — driven by
 * the engine kit (`@vance/engine`, Chat Completions over plain fetch) against the fake OpenAI
 * endpoint of `test/support/fake-providers.ts`, whose scripted "model" really reads the tool
 * results it is sent and computes the answer from them.
 *
 * Three runs of the same task, side by side:
 * - direct, one call a turn: the model calls `get_record` five times, one per turn, then answers;
 * - direct, parallel calls: all five calls in one turn, then the answer;
 * - code mode: one `execute_javascript` program that calls `get_record` five times, filters and
 *   sums, then the answer.
 * For each: model round trips, tool calls the engine sent, the records server's requests, and
 * the tokens that reached the model — every request's messages and tools, counted with o200k
 * (`gpt-tokenizer`) as JSON, which is how they travel — and those it wrote (its tool calls and
 * answers). Everything counted is deterministic: the ratio is code mode's against each direct run.
 *
 * Run: `npm run bench -- code-mode`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { createVanceClient } from "@vance/client";
import { silentLogger } from "@vance/core";
import { postJson, VanceEngine } from "@vance/engine";
import {
  type ChatCompletionLike,
  chatRequest,
  chatToolMessages,
  readChatCompletion,
} from "@vance/engine/openai";
import { ScriptPool } from "@vance/sandbox";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { createApp } from "../functions/api/app";
import { mintToken } from "../functions/api/auth";
import { loadConfig } from "../functions/api/config";
import { buildServices } from "../functions/api/services";
import {
  type FakeProvider,
  fakeOpenAi,
  type ProviderRequest,
  type ScriptedReply,
} from "../test/support/fake-providers";
import { formatNumber, renderTable, runIfMain } from "./support/report";

const SECRET = "bench-secret-0123456789";
const TENANT = "bench";
const PROJECT = "code-mode";
const IDS = [1, 2, 3, 4, 5];
const SYSTEM = "You are a bookkeeping assistant. Use your tools.";
const PROMPT = "Fetch records 1 to 5, keep the paid ones and tell me the sum of their amounts.";

/** A record as a real API answers one: the two fields the task needs among many it does not. */
function record(id: number) {
  return {
    id,
    number: `INV-2026-${String(1000 + id)}`,
    status: id % 2 === 1 ? "paid" : "open",
    amount: 100 * id + 17,
    currency: "EUR",
    issuedAt: `2026-03-0${id}T09:30:00Z`,
    dueAt: `2026-04-0${id}T23:59:59Z`,
    customer: {
      id: `cus_${id}8f2a`,
      name: `Customer ${id} GmbH`,
      email: `billing${id}@customer${id}.example`,
      address: { street: `${id} Harbour Road`, city: "Hamburg", postalCode: `2045${id}`, country: "DE" },
      vatId: `DE12345678${id}`,
    },
    lines: [1, 2, 3].map((line) => ({
      sku: `SKU-${id}${line}`,
      description: `Consulting services, block ${line} of project ${id}`,
      quantity: line,
      unitPrice: 10 * line,
    })),
    notes: "Payment by bank transfer within 30 days. Please quote the invoice number.",
    tags: ["consulting", id % 2 === 1 ? "settled" : "reminder-sent"],
  };
}

const EXPECTED = IDS.map(record)
  .filter((entry) => entry.status === "paid")
  .reduce((sum, entry) => sum + entry.amount, 0);

const PROGRAM = `const records = [1, 2, 3, 4, 5].map((id) => vance.tools.call("get_record", { id }));
const paid = records.filter((r) => r.status === "paid");
({ count: paid.length, total: paid.reduce((sum, r) => sum + r.amount, 0) })`;

/** The tool results the request carries, parsed. */
function toolResults(request: ProviderRequest): unknown[] {
  const messages = request.body.messages as { role: string; content?: unknown }[];
  return messages
    .filter((message) => message.role === "tool")
    .map((message) => JSON.parse(String(message.content)));
}

function answer(total: number): ScriptedReply {
  return { text: `The paid records sum to ${total} EUR.` };
}

const sumPaid = (records: unknown[]) =>
  (records as { status: string; amount: number }[])
    .filter((entry) => entry.status === "paid")
    .reduce((sum, entry) => sum + entry.amount, 0);

/** The "model" of each run: it reads what it is sent and decides from it. */
const MODELS: Record<string, (request: ProviderRequest) => ScriptedReply> = {
  "direct, one call a turn": (request) => {
    const seen = toolResults(request);
    if (seen.length < IDS.length) {
      return { toolCalls: [{ name: "get_record", arguments: { id: IDS[seen.length]! } }] };
    }
    return answer(sumPaid(seen));
  },
  "direct, parallel calls": (request) => {
    const seen = toolResults(request);
    if (seen.length === 0) {
      return { toolCalls: IDS.map((id) => ({ name: "get_record", arguments: { id } })) };
    }
    return answer(sumPaid(seen));
  },
  "code mode": (request) => {
    const [program] = toolResults(request) as { result: { total: number } }[];
    if (!program) return { toolCalls: [{ name: "execute_javascript", arguments: { code: PROGRAM } }] };
    return answer(program.result.total);
  },
};

interface RunFigures {
  readonly name: string;
  readonly roundTrips: number;
  readonly toolCalls: number;
  readonly upstreamRequests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly firstRequestTokens: number;
  readonly answer: string;
}

/** Runs `bench -- code-mode`: the three runs, their figures side by side, and code mode's ratios. */
export async function main(): Promise<void> {
  const pool = await ScriptPool.create({ warmWorkers: 1 });
  const dataDir = mkdtempSync(join(tmpdir(), "vance-bench-code-mode-"));
  let upstreamRequests = 0;
  const records = createServer((req, res) => {
    upstreamRequests += 1;
    const id = Number(/^\/records\/(\d+)$/.exec(req.url ?? "")?.[1]);
    res.writeHead(id ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(id ? record(id) : { message: "no such record" }));
  });
  await new Promise<void>((resolve) => records.listen(0, "127.0.0.1", resolve));
  const recordsUrl = `http://127.0.0.1:${(records.address() as AddressInfo).port}`;
  const services = await buildServices(
    loadConfig({ VANCE_DATA_DIR: dataDir, VANCE_NETWORK_ALLOWLIST: "127.0.0.1" }),
    SECRET,
    { logger: silentLogger, scripts: pool, env: {} },
  );
  const server = serve({ fetch: createApp(services).fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await fakeOpenAi();
  try {
    const token = await mintToken(SECRET, { tenant: TENANT, roles: ["read", "write"] }, 3600);
    const client = createVanceClient({ baseUrl: base, token });
    await client.project(TENANT, PROJECT).putTool(
      "get_record",
      `type: rest
description: Fetches one invoice record by its id, with its customer, lines and status.
parameters:
  url: ${recordsUrl}/records/{id}
  inputs:
    - { name: id, type: integer, description: The record's id }
`,
    );
    const engine = new VanceEngine({ client, tenant: TENANT, project: PROJECT });
    const figures: RunFigures[] = [];
    for (const [name, model] of Object.entries(MODELS)) {
      const codeMode = name === "code mode";
      const agent = await engine.spawn({
        engine: "bookkeeper",
        allowedToolsAdd: codeMode ? ["execute_javascript", "get_record"] : ["get_record"],
        models: [],
      });
      const from = provider.requests.length;
      const upstreamFrom = upstreamRequests;
      provider.script(Array.from({ length: 10 }, () => model));
      const figure = await runTask(agent, provider, name);
      const sent = provider.requests.slice(from);
      figures.push({
        ...figure,
        upstreamRequests: upstreamRequests - upstreamFrom,
        inputTokens: sent.reduce((sum, request) => sum + inputTokens(request), 0),
        firstRequestTokens: inputTokens(sent[0]!),
        outputTokens: sent.reduce((sum, request) => sum + outputTokens(model(request)), 0),
      });
    }
    report(figures);
  } finally {
    await provider.close();
    server.close();
    records.close();
    await pool.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The engine's loop for one run: turns until the model answers in text. */
async function runTask(
  agent: Awaited<ReturnType<VanceEngine["spawn"]>>,
  provider: FakeProvider,
  name: string,
): Promise<Omit<RunFigures, "upstreamRequests" | "inputTokens" | "outputTokens" | "firstRequestTokens">> {
  const url = `${provider.baseUrl}/chat/completions`;
  const messages: { role: string; content?: unknown }[] = [{ role: "user", content: PROMPT }];
  let roundTrips = 0;
  let toolCalls = 0;
  for (let step = 0; step < 10; step++) {
    const { turn, result } = await agent.runTurn(
      (turn) => chatRequest(turn, { model: "m", system: SYSTEM, messages }),
      (request) => postJson<ChatCompletionLike>(url, request),
    );
    roundTrips += 1;
    const reply = readChatCompletion(result);
    messages.push(reply.message);
    if (reply.toolCalls.length === 0) {
      if (reply.text !== `The paid records sum to ${EXPECTED} EUR.`) {
        throw new Error(`${name}: the model answered ${JSON.stringify(reply.text)}, not the sum ${EXPECTED}`);
      }
      return { name, roundTrips, toolCalls, answer: reply.text };
    }
    toolCalls += reply.toolCalls.length;
    const results = await Promise.all(reply.toolCalls.map((call) => agent.handleToolCall(call, turn)));
    const failed = results.find((result) => !result.ok);
    if (failed) throw new Error(`${name}: ${failed.content}`);
    messages.push(...chatToolMessages(results));
  }
  throw new Error(`${name}: no answer after 10 turns`);
}

/** Tokens of what one request put before the model: its messages and its tools, as JSON. */
function inputTokens(request: ProviderRequest): number {
  return (
    encode(JSON.stringify(request.body.messages)).length + encode(JSON.stringify(request.body.tools)).length
  );
}

/** Tokens the model wrote for one reply: its text, or its tool calls' names and arguments. */
function outputTokens(reply: ScriptedReply): number {
  return encode(reply.text ?? JSON.stringify(reply.toolCalls ?? [])).length;
}

function report(figures: readonly RunFigures[]): void {
  const code = figures.find((figure) => figure.name === "code mode")!;
  const number = (value: number) => formatNumber(value, 0);
  console.log(`task: ${PROMPT}\nanswer (every run): ${code.answer}\n`);
  console.log(
    renderTable(
      [
        { title: "run" },
        { title: "model round trips", right: true },
        { title: "tool calls sent", right: true },
        { title: "records requests", right: true },
        { title: "tokens in, first request", right: true },
        { title: "tokens to the model", right: true },
        { title: "tokens from the model", right: true },
      ],
      figures.map((figure) => [
        figure.name,
        number(figure.roundTrips),
        number(figure.toolCalls),
        number(figure.upstreamRequests),
        number(figure.firstRequestTokens),
        number(figure.inputTokens),
        number(figure.outputTokens),
      ]),
    ),
  );
  console.log("");
  for (const direct of figures.filter((figure) => figure !== code)) {
    const ratio = (a: number, b: number) => `${formatNumber(a / b, 2)}×`;
    console.log(
      `code mode vs ${direct.name}: tokens to the model ${ratio(code.inputTokens, direct.inputTokens)}, ` +
        `round trips ${ratio(code.roundTrips, direct.roundTrips)}, tokens from the model ${ratio(code.outputTokens, direct.outputTokens)}`,
    );
  }
}

runIfMain(import.meta.url, main);
