import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";

/**
 * An HTTP proxy in front of s3rver that enforces S3's documented conditional-write rules, which
 * s3rver ignores (DESIGN.md §5): a PUT or DELETE with `If-Match` answers 412 PreconditionFailed
 * when the object's current ETag differs (or it is absent), a PUT with `If-None-Match: *` when the
 * key exists. Conditional requests on one key are serialised: the check and the write happen
 * under one lock, as S3 decides one writer per key. Everything else passes through unchanged
 * (the client's signature covers the `Host` it sent, which is forwarded as is).
 */
export interface S3ConditionalProxy {
  readonly endpoint: string;
  /** Conditional requests refused with 412 so far. */
  readonly refused: number;
  /** Answers held back so far (`holdNextAnswer`). */
  readonly held: number;
  /**
   * The next write to `key` (a PUT or DELETE; path-style, without the bucket) reaches s3rver and
   * is applied, but its answer is held back `ms` — past a client's timeout, as S3 may answer late:
   * the client then sends the same request again and meets what its own first attempt did.
   */
  holdNextAnswer(key: string, ms: number): void;
  close(): Promise<void>;
}

/** `head` reads the object's current ETag straight from s3rver (a signed client of its own). */
export async function startS3ConditionalProxy(target: string, head: S3Client): Promise<S3ConditionalProxy> {
  const upstream = new URL(target);
  const locks = new Map<string, Promise<void>>();
  let refused = 0;
  let held = 0;
  const holds = new Map<string, number>();

  /**
   * Sends the request on and, once s3rver answered, the answer back: at once, or after `holdMs`
   * (resolving as soon as s3rver answered, so the key's lock is not held while the answer waits).
   */
  const forward = (req: IncomingMessage, body: Buffer, res: import("node:http").ServerResponse, holdMs = 0) =>
    new Promise<void>((resolve) => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          if (holdMs > 0) {
            const chunks: Buffer[] = [];
            answer.on("data", (chunk: Buffer) => chunks.push(chunk));
            answer.on("end", () => {
              resolve();
              setTimeout(() => {
                if (res.destroyed) return;
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                res.end(Buffer.concat(chunks));
              }, holdMs);
            });
            answer.on("error", () => resolve());
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on("end", () => resolve());
          answer.on("error", () => resolve());
        },
      );
      out.on("error", () => {
        res.writeHead(502).end();
        resolve();
      });
      out.end(body);
    });

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const ifMatch = req.headers["if-match"];
    const ifNoneMatch = req.headers["if-none-match"];
    const write = req.method === "PUT" || req.method === "DELETE";
    const conditional = write && (ifMatch !== undefined || ifNoneMatch === "*");
    // Path-style: /{bucket}/{key}
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!.slice(1));
    const slash = path.indexOf("/");
    const bucket = path.slice(0, slash);
    const key = path.slice(slash + 1);
    const holdMs = write ? (holds.get(key) ?? 0) : 0;
    if (holdMs > 0) {
      holds.delete(key);
      held++;
    }
    if (!conditional) return forward(req, body, res, holdMs);
    const previous = locks.get(path) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chained = previous.then(() => mine);
    locks.set(path, chained);
    await previous;
    try {
      const current = await currentEtag(head, bucket, key);
      const fails =
        (ifNoneMatch === "*" && current !== null) || (ifMatch !== undefined && current !== ifMatch);
      if (fails) {
        refused++;
        res.writeHead(412, { "content-type": "application/xml" });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>${ifMatch !== undefined ? "If-Match" : "If-None-Match"}</Condition></Error>`,
        );
        return;
      }
      await forward(req, body, res, holdMs);
    } finally {
      release();
      if (locks.get(path) === chained) locks.delete(path);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get refused() {
      return refused;
    },
    get held() {
      return held;
    },
    holdNextAnswer(key: string, ms: number) {
      holds.set(key, ms);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function currentEtag(head: S3Client, bucket: string, key: string): Promise<string | null> {
  try {
    return (await head.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag ?? null;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw error;
  }
}
