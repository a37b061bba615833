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
  close(): Promise<void>;
}

/** `head` reads the object's current ETag straight from s3rver (a signed client of its own). */
export async function startS3ConditionalProxy(target: string, head: S3Client): Promise<S3ConditionalProxy> {
  const upstream = new URL(target);
  const locks = new Map<string, Promise<void>>();
  let refused = 0;

  const forward = (req: IncomingMessage, body: Buffer, res: import("node:http").ServerResponse) =>
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
    const conditional =
      (req.method === "PUT" || req.method === "DELETE") && (ifMatch !== undefined || ifNoneMatch === "*");
    if (!conditional) return forward(req, body, res);
    // Path-style: /{bucket}/{key}
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!.slice(1));
    const slash = path.indexOf("/");
    const bucket = path.slice(0, slash);
    const key = path.slice(slash + 1);
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
      await forward(req, body, res);
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
