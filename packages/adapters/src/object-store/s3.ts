import { randomUUID } from "node:crypto";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import type {
  DeleteOptions,
  DeleteResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectAudit,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
} from "@vance/core";
import {
  addStoreFaultHandling,
  asStoreFault,
  boundedClientConfig,
  DEFAULT_STORE_DEADLINE_MS,
} from "../store-faults";
import { MAX_LIST_PAGE_SIZE, resolvePageLimit } from "./keys";

const STORE = "object store";

export interface S3ClientSettings {
  /** e.g. `http://127.0.0.1:4568` for s3rver; AWS's endpoint when absent. */
  readonly endpoint?: string;
  /** Falls back to the SDK's resolution (`AWS_REGION`, profile) when absent. */
  readonly region?: string;
  readonly credentials?: S3ClientConfig["credentials"];
  /** `true` for local servers that do not resolve `bucket.host` names. */
  readonly forcePathStyle?: boolean;
  /**
   * Longest one request may take, retries included, before it fails with
   * `StoreUnavailableError`; {@link DEFAULT_STORE_DEADLINE_MS} unless given.
   */
  readonly deadlineMs?: number;
}

/**
 * An `S3Client` that only computes and validates checksums when an operation requires them
 * (s3rver and other S3 look-alikes reject or mangle the SDK's default flexible checksums), and
 * whose requests are bounded in time and fail as `StoreUnavailableError` when S3 cannot be reached.
 */
export function createS3Client(settings: S3ClientSettings = {}): S3Client {
  const deadlineMs = settings.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
  const client = new S3Client({
    ...boundedClientConfig(deadlineMs),
    ...(settings.endpoint !== undefined && { endpoint: settings.endpoint }),
    ...(settings.region !== undefined && { region: settings.region }),
    ...(settings.credentials !== undefined && { credentials: settings.credentials }),
    ...(settings.forcePathStyle !== undefined && { forcePathStyle: settings.forcePathStyle }),
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  addStoreFaultHandling(client, STORE, deadlineMs);
  return client;
}

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Key prefix so one bucket can hold several stores; a missing trailing "/" is added. */
  readonly prefix?: string;
  /** The clock of the audit times (`createdAt`, `updatedAt`); `Date.now` unless given (tests). */
  readonly now?: () => number;
}

/**
 * `ObjectStore` over one S3 bucket (optionally under a key prefix). One port call is one HTTP
 * request, except `delete`, which needs a HEAD first because S3's DELETE answers 204 for
 * absent keys, and a `put` that may replace an object, which reads its head first to keep its
 * `createdAt`. `requestCount` counts every request this store sends, retries included.
 *
 * Audit fields travel as user metadata (`x-amz-meta-created-at`, `-updated-at`, `-updated-by`,
 * the author percent-encoded: metadata is ASCII), so a GET brings them at no extra request; an
 * object written without them (straight into the bucket) shows its `LastModified` as `updatedAt`.
 */
export class S3ObjectStore implements ObjectStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #now: () => number;
  #requestCount = 0;

  constructor(options: S3ObjectStoreOptions) {
    this.#client = options.client;
    this.#now = options.now ?? (() => Date.now());
    this.#bucket = options.bucket;
    const prefix = options.prefix ?? "";
    this.#prefix = prefix === "" || prefix.endsWith("/") ? prefix : `${prefix}/`;
  }

  /** HTTP requests sent by this store since construction or the last `resetRequestCount()`. */
  get requestCount(): number {
    return this.#requestCount;
  }

  /** Starts `requestCount` from zero again. */
  resetRequestCount(): void {
    this.#requestCount = 0;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const command = new GetObjectCommand({
      Bucket: this.#bucket,
      Key: this.#prefix + key,
      IfNoneMatch: options?.ifNoneMatch,
    });
    command.middlewareStack.add(this.#countRequest, COUNTER_OPTIONS);
    try {
      const output = await this.#client.send(command);
      const body = (await output.Body?.transformToString("utf-8")) ?? "";
      return {
        key,
        body,
        etag: requireEtag(output.ETag, key),
        contentType: output.ContentType,
        audit: auditOf(output.Metadata, output.LastModified),
      };
    } catch (error) {
      // The SDK surfaces 304 as an error without a name of its own ("Unknown").
      if (statusOf(error) === 304) return { notModified: true };
      if (isNotFound(error)) return null;
      // Also a body cut off mid-transfer, which the client's middleware does not see.
      throw asStoreFault(error, STORE);
    }
  }

  async put(key: string, body: string, options?: PutOptions): Promise<PutResult> {
    const at = new Date(this.#now()).toISOString();
    // A creation (`If-None-Match: *`) needs no read; a replacement keeps the creation time.
    let createdAt: string | null = at;
    let createdBy: string | null = options?.author ?? null;
    if (options?.ifNoneMatch !== "*") {
      // Only for the creation's fields: an `If-Match` is still the PUT's own, so the write stays atomic.
      const current = await this.#head(key);
      // An object stored without the service has no known creation time or creator.
      if (current) {
        createdAt = current.metadata[META_CREATED_AT] ?? null;
        createdBy = decodedSubject(current.metadata[META_CREATED_BY]);
      }
    }
    const audit: ObjectAudit = { createdAt, createdBy, updatedAt: at, updatedBy: options?.author ?? null };
    // Tells this write apart from any other when a retry of it is refused (see below).
    const writeToken = randomUUID();
    const command = new PutObjectCommand({
      Bucket: this.#bucket,
      Key: this.#prefix + key,
      Body: body,
      ContentType: options?.contentType,
      IfMatch: options?.ifMatch,
      IfNoneMatch: options?.ifNoneMatch,
      Metadata: {
        ...(createdAt === null ? {} : { [META_CREATED_AT]: createdAt }),
        ...(createdBy === null ? {} : { [META_CREATED_BY]: encodeURIComponent(createdBy) }),
        [META_UPDATED_AT]: at,
        [META_WRITE_TOKEN]: writeToken,
        ...(options?.author === undefined ? {} : { [META_UPDATED_BY]: encodeURIComponent(options.author) }),
      },
    });
    command.middlewareStack.add(this.#countRequest, COUNTER_OPTIONS);
    try {
      const output = await this.#client.send(command);
      return { ok: true, etag: requireEtag(output.ETag, key), audit };
    } catch (error) {
      if (!isPreconditionFailure(error)) throw asStoreFault(error, STORE);
      // The SDK resent the PUT (its answer was lost): an earlier attempt may have been applied,
      // and then its own precondition refuses the resend. The stored object's token tells.
      if (attemptsOf(error) > 1) {
        const current = await this.#head(key);
        if (current?.etag !== undefined && current.metadata[META_WRITE_TOKEN] === writeToken) {
          return { ok: true, etag: current.etag, audit };
        }
      }
      return { ok: false, reason: "precondition_failed" };
    }
  }

  /** The object's ETag, metadata and modification time, or null when absent (one HEAD). */
  async #head(key: string): Promise<{ etag: string | undefined; metadata: Record<string, string> } | null> {
    const head = new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key });
    head.middlewareStack.add(this.#countRequest, COUNTER_OPTIONS);
    try {
      const output = await this.#client.send(head);
      return { etag: output.ETag, metadata: output.Metadata ?? {} };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw asStoreFault(error, STORE);
    }
  }

  async delete(key: string, options?: DeleteOptions): Promise<DeleteResult> {
    const current = await this.#head(key);
    if (!current) return { ok: false, reason: "not_found" };
    if (options?.ifMatch !== undefined && current.etag !== options.ifMatch) {
      return { ok: false, reason: "precondition_failed" };
    }
    // IfMatch again on the DELETE itself closes the window between HEAD and DELETE on real S3.
    const command = new DeleteObjectCommand({
      Bucket: this.#bucket,
      Key: this.#prefix + key,
      IfMatch: options?.ifMatch,
    });
    command.middlewareStack.add(this.#countRequest, COUNTER_OPTIONS);
    try {
      await this.#client.send(command);
      return { ok: true };
    } catch (error) {
      if (isPreconditionFailure(error)) return { ok: false, reason: "precondition_failed" };
      if (isNotFound(error)) return { ok: false, reason: "not_found" };
      throw asStoreFault(error, STORE);
    }
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const command = new ListObjectsV2Command({
      Bucket: this.#bucket,
      Prefix: this.#prefix + prefix,
      MaxKeys: resolvePageLimit(options?.limit, MAX_LIST_PAGE_SIZE),
      ContinuationToken: options?.cursor,
      ...(options?.delimiter ? { Delimiter: options.delimiter } : {}),
    });
    command.middlewareStack.add(this.#countRequest, COUNTER_OPTIONS);
    const output = await this.#client.send(command).catch((error: unknown) => {
      throw asStoreFault(error, STORE);
    });
    const items = (output.Contents ?? []).map(
      (object): ObjectMeta => ({
        key: (object.Key ?? "").slice(this.#prefix.length),
        etag: requireEtag(object.ETag, object.Key ?? ""),
        size: object.Size ?? 0,
      }),
    );
    const cursor = output.IsTruncated ? output.NextContinuationToken : undefined;
    if (!options?.delimiter) return { items, cursor };
    const folders = (output.CommonPrefixes ?? []).map((folder) =>
      (folder.Prefix ?? "").slice(this.#prefix.length),
    );
    return { items, folders, cursor };
  }

  /**
   * Sits in the deserialize step, inside the retry loop, so it runs once per HTTP attempt.
   * Added per command rather than on the client, which several stores may share.
   */
  readonly #countRequest = <Args, Output>(next: (args: Args) => Promise<Output>) => {
    return (args: Args): Promise<Output> => {
      this.#requestCount++;
      return next(args);
    };
  };
}

const COUNTER_OPTIONS = { step: "deserialize", name: "vanceRequestCounter" } as const;

/** User metadata keys of the audit fields (S3 lower-cases them). */
const META_CREATED_AT = "created-at";
const META_CREATED_BY = "created-by";
const META_UPDATED_AT = "updated-at";
const META_UPDATED_BY = "updated-by";
/** A fresh token per PUT: a retried PUT refused by its own earlier attempt recognises it by this. */
const META_WRITE_TOKEN = "write-token";

/** The audit fields from an object's metadata; `LastModified` stands in for an object written without them. */
function auditOf(metadata: Record<string, string> | undefined, lastModified: Date | undefined): ObjectAudit {
  return {
    createdAt: metadata?.[META_CREATED_AT] ?? null,
    createdBy: decodedSubject(metadata?.[META_CREATED_BY]),
    updatedAt: metadata?.[META_UPDATED_AT] ?? lastModified?.toISOString() ?? null,
    updatedBy: decodedSubject(metadata?.[META_UPDATED_BY]),
  };
}

/** A subject as kept in user metadata (percent-encoded: metadata is ASCII); as stored when it does not decode. */
function decodedSubject(stored: string | undefined): string | null {
  if (stored === undefined) return null;
  try {
    return decodeURIComponent(stored);
  } catch {
    return stored;
  }
}

/** HTTP attempts the SDK made for a failed command (retries included). */
function attemptsOf(error: unknown): number {
  const metadata = (error as { $metadata?: { attempts?: number } } | null)?.$metadata;
  return metadata?.attempts ?? 1;
}

function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("$metadata" in error)) return undefined;
  const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  return metadata?.httpStatusCode;
}

function nameOf(error: unknown): string | undefined {
  return error instanceof Error || (typeof error === "object" && error !== null && "name" in error)
    ? String((error as { name: unknown }).name)
    : undefined;
}

function isNotFound(error: unknown): boolean {
  const name = nameOf(error);
  return statusOf(error) === 404 || name === "NoSuchKey" || name === "NotFound";
}

/** 412 when the condition did not hold; 409 when a concurrent conditional write to the key won. */
function isPreconditionFailure(error: unknown): boolean {
  const name = nameOf(error);
  return statusOf(error) === 412 || name === "PreconditionFailed" || name === "ConditionalRequestConflict";
}

function requireEtag(etag: string | undefined, key: string): string {
  if (etag === undefined || etag === "") throw new Error(`S3 returned no ETag for ${key}`);
  return etag;
}
