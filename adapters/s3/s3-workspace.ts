import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
  type GetObjectCommandOutput,
  type HeadObjectCommandOutput,
  type ListObjectsV2CommandInput,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import {
  keyedLock,
  IsoagentError,
  WorkspacePath,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type WorkspaceServices,
  type WorkspaceStat,
  type WriteOptions,
  type WriteOutcome,
} from '../../src/index.ts'
import {
  isMissingKey,
  isPreconditionFailure,
  isUnsatisfiableRange,
  s3Error,
  statusOf,
} from './s3-errors.ts'
import { copySource, KeySpace, normalisePrefix } from './s3-keys.ts'
import { listDirectory, type RawPage } from './s3-list.ts'

const MiB = 1024 * 1024
/** Writes of at least this many bytes go through a multipart upload (default 8 MiB). */
export const DEFAULT_MULTIPART_THRESHOLD = 8 * MiB
/** Size of each multipart part (default 8 MiB; S3 needs ≥ 5 MiB for all but the last). */
export const DEFAULT_PART_BYTES = 8 * MiB
/** Largest object a single `CopyObject` may copy; larger ones are copied part by part. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 * MiB
const MIN_PART_BYTES = 5 * MiB
const MAX_PARTS = 10_000
const PART_CONCURRENCY = 4
const COPY_CONCURRENCY = 8
const DELETE_BATCH = 1000
const PROBE_BODY = new TextEncoder().encode('isoagent conditional-write probe\n')

/** Options of {@link s3Workspace}. */
export interface S3WorkspaceOptions {
  bucket: string
  /**
   * Key prefix that is the workspace root, and a wall: no key outside it is ever read, listed or
   * written. `'team/repo'` and `'team/repo/'` are the same; default `''`, the whole bucket.
   */
  prefix?: string
  /** A client of your own (its credentials, endpoint, retries). Not destroyed by `close()`. */
  client?: S3Client
  /** Configuration of the client the workspace creates when `client` is not given. */
  clientConfig?: S3ClientConfig
  /**
   * Whether writes with a precondition (`ifVersion`, `ifAbsent`) are enforced by the store:
   *
   * - `true`: send `If-Match: <etag>` / `If-None-Match: *` and trust the store to refuse a write
   *   whose condition no longer holds (AWS S3, Cloudflare R2, MinIO). `capabilities.conditionalWrite`
   *   is true.
   * - `false`: the store ignores these headers (s3rver, older S3-compatible stores). The
   *   workspace still checks the condition with a `HeadObject` just before the `PutObject`, and
   *   serialises writes to the same key within this workspace object, but another writer (another
   *   process, or another workspace object) can change the object between that check and the
   *   write: a race window of one round trip in which a concurrent change can be overwritten
   *   without a `version_conflict`. `capabilities.conditionalWrite` is false.
   * - `'auto'` (default): decide once, on the first write that carries a precondition, by
   *   probing the store inside the prefix: a hidden object `.isoagent-probe-<random>` is put
   *   with `If-None-Match: *` twice and then with a wrong `If-Match`; if both repeats are
   *   refused the store enforces conditions, else the workspace behaves as with `false`. The
   *   probe object is deleted again. `capabilities.conditionalWrite` reads false until the probe
   *   has proven support.
   */
  conditionalWrites?: 'auto' | boolean
  /** Writes of at least this many bytes use a multipart upload (default 8 MiB, at least 5 MiB). */
  multipartThresholdBytes?: number
  /** Part size of multipart uploads and part-wise copies (default 8 MiB, at least 5 MiB). */
  partBytes?: number
  /** Keys asked for per `ListObjectsV2` request (default 1000, S3's maximum). */
  listPageSize?: number
}

/** An S3 workspace: the port, plus the answer of the conditional-write probe. */
export interface S3WorkspaceServices extends WorkspaceServices {
  readonly descriptor: { kind: 's3'; bucket: string; prefix: string }
  /** Whether the store enforces `If-Match`/`If-None-Match` (runs the probe under `'auto'`). */
  conditionalWritesEnforced(): Promise<boolean>
}

interface Precondition {
  IfMatch?: string
  IfNoneMatch?: string
}

/** The version of an object: its ETag without quotes (or a weak stand-in when it has none). */
function versionOf(head: { ETag?: string; LastModified?: Date; ContentLength?: number }): string {
  const etag = head.ETag?.replace(/^W\//, '').replace(/^"(.*)"$/, '$1')
  if (etag !== undefined && etag !== '') return etag
  return `w:${head.ContentLength ?? 0}:${head.LastModified?.getTime() ?? 0}`
}

const quoted = (version: string) => (version.startsWith('"') ? version : `"${version}"`)

async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  let failed = false
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++
      try {
        await run(items[index]!, index)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

function randomHex(bytes: number): string {
  const data = crypto.getRandomValues(new Uint8Array(bytes))
  return [...data].map((b) => b.toString(16).padStart(2, '0')).join('')
}

function checkSize(name: string, value: number | undefined, fallback: number, min: number) {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min)
    throw new IsoagentError('invalid_argument', `${name} must be an integer of at least ${min}`)
  return value
}

/**
 * A workspace in an S3 bucket (AWS S3, Cloudflare R2, MinIO, s3rver, …) under a key prefix.
 *
 * - **Files** are objects: `key = prefix + path`. Reads of a range are ranged `GetObject`s
 *   (`Range: bytes=a-b`) that fetch only those bytes; streams hand on the response body as it
 *   arrives; a body that ends short of its `Content-Length` fails with `io`. `stat` is a
 *   `HeadObject`: size, `mtimeMs` and `version` = the ETag without quotes.
 * - **Directories** are key prefixes: a directory exists when any key starts with `dir/`
 *   (a zero-byte marker object `dir/` counts, and `mkdir` writes one). `list` uses
 *   `ListObjectsV2` with delimiter `/`, `StartAfter` for `after` and continuation tokens; see
 *   {@link listDirectory} for how its pages stay exact although S3's order is not the port's.
 *   Removing the last entry of a directory leaves a marker, so the directory stays, as on disk.
 * - **Writes** are one `PutObject` (atomic: readers see the old or the new object), or a
 *   multipart upload from 8 MiB on (aborted on failure). Preconditions: see
 *   {@link S3WorkspaceOptions.conditionalWrites}. Writing where a directory is fails with
 *   `is_directory`, under a file with `not_directory`.
 * - **remove** deletes one object, or every key under `dir/` in `DeleteObjects` batches of 1000
 *   (`recursive`). **rename** copies (`CopyObject`; part by part past 5 GiB or when the store
 *   cannot resolve the copy source) and then deletes; directories are renamed key by key, all
 *   copies first, so a failure leaves the source whole. Neither is atomic across keys.
 * - **The prefix is a wall**: keys are rebuilt from normalised paths and checked again (no
 *   `..`, `//`, leading `/`, control characters, nothing over 1024 bytes), and every key a
 *   listing returns is checked to lie under the prefix before it is shown or deleted.
 * - **Errors** are short `IsoagentError`s: see {@link s3Error}.
 *
 * Capabilities: read, write, search; no exec, git, symlinks or local root (so no `bash`,
 * `git` or `download` tools). `git` is withheld on purpose: isomorphic-git over a bucket would
 * not be a repository one can trust. Git updates refs and the index with lock-file-and-rename
 * (S3 has no rename: a copy then a delete, neither atomic), keeps an object store of thousands of
 * small files (one request each, for every status), and relies on directories that S3 does not
 * have; two writers, or one interrupted one, could leave a branch pointing at a commit whose
 * objects never landed. Clone the bucket into a memory or local workspace to use git on it.
 */
export function s3Workspace(options: S3WorkspaceOptions): S3WorkspaceServices {
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 's3Workspace needs { bucket, prefix? }')
  const bucket = options.bucket
  // eslint-disable-next-line no-control-regex
  if (typeof bucket !== 'string' || bucket === '' || /[\u0000-\u001f\u007f]/.test(bucket))
    throw new IsoagentError('invalid_argument', 's3Workspace needs a bucket name', {
      data: { bucket },
    })
  const prefix = normalisePrefix(options.prefix)
  const keys = new KeySpace(prefix)
  const threshold = checkSize(
    'multipartThresholdBytes',
    options.multipartThresholdBytes,
    DEFAULT_MULTIPART_THRESHOLD,
    MIN_PART_BYTES,
  )
  const partBytes = checkSize('partBytes', options.partBytes, DEFAULT_PART_BYTES, MIN_PART_BYTES)
  const pageSize = checkSize('listPageSize', options.listPageSize, 1000, 1)
  const mode = options.conditionalWrites ?? 'auto'
  if (mode !== 'auto' && typeof mode !== 'boolean')
    throw new IsoagentError('invalid_argument', "conditionalWrites must be 'auto', true or false")
  const ownsClient = options.client === undefined
  const client = options.client ?? new S3Client(options.clientConfig ?? {})

  let conditional: boolean | undefined = mode === 'auto' ? undefined : mode
  let probing: Promise<boolean> | undefined
  const withLock = keyedLock()

  const fail = (error: unknown, op: string, path?: string) =>
    s3Error(error, path === undefined ? { op, bucket } : { op, bucket, path })
  const notFound = (path: string) =>
    new IsoagentError('not_found', `not found: ${WorkspacePath.display(path as WorkspacePath)}`, {
      data: { path },
    })
  const isDirectory = (path: string) =>
    new IsoagentError(
      'is_directory',
      `${WorkspacePath.display(path as WorkspacePath)} is a directory`,
      {
        data: { path },
      },
    )
  const httpOptions = (signal?: AbortSignal) =>
    signal === undefined ? undefined : { abortSignal: signal }

  /** Run one request; a failure becomes a typed {@link s3Error}. */
  async function call<T>(op: string, path: string | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      throw fail(error, op, path)
    }
  }

  /** HeadObject, or undefined when there is no such object. */
  async function head(
    key: string,
    op: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<HeadObjectCommandOutput | undefined> {
    try {
      return await client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: key }),
        httpOptions(signal),
      )
    } catch (error) {
      if (isMissingKey(error)) return undefined
      throw fail(error, op, path)
    }
  }

  /**
   * One `ListObjectsV2` page, keys URL-encoded on the wire (`EncodingType: url`, so keys with
   * characters XML 1.0 cannot carry still parse) and decoded here, and only keys under the
   * prefix kept: whatever a store answers, nothing outside the wall gets through.
   */
  async function listV2(
    input: Omit<ListObjectsV2CommandInput, 'Bucket' | 'EncodingType'>,
    op: string,
    path: string,
    signal?: AbortSignal,
  ): Promise<RawPage> {
    const out = await call(op, path, () =>
      client.send(
        new ListObjectsV2Command({ Bucket: bucket, EncodingType: 'url', ...input }),
        httpOptions(signal),
      ),
    )
    const decode = (value: string | undefined) =>
      value === undefined || out.EncodingType !== 'url' ? value : decodeListedKey(value)
    const objects: RawPage['objects'] = []
    for (const c of out.Contents ?? []) {
      const key = decode(c.Key)
      if (keys.contains(key)) objects.push({ key, size: c.Size ?? 0 })
    }
    const prefixes: string[] = []
    for (const c of out.CommonPrefixes ?? []) {
      const prefix = decode(c.Prefix)
      if (keys.contains(prefix)) prefixes.push(prefix)
    }
    const next = out.IsTruncated ? out.NextContinuationToken : undefined
    return next ? { objects, prefixes, next } : { objects, prefixes }
  }

  /** Whether any key starts with `dirPrefix`. */
  async function exists(dirPrefix: string, op: string, path: string, signal?: AbortSignal) {
    const out = await listV2({ Prefix: dirPrefix, MaxKeys: 1 }, op, path, signal)
    return (
      out.objects.some((o) => o.key.startsWith(dirPrefix)) ||
      out.prefixes.some((p) => p.startsWith(dirPrefix))
    )
  }

  const dirExists = (path: WorkspacePath, op: string, signal?: AbortSignal) =>
    path === '' ? Promise.resolve(true) : exists(keys.dir(path), op, path, signal)

  /** The outermost ancestor directory of `path` that is a file (an object), if any. */
  async function fileAncestor(path: WorkspacePath, op: string, signal?: AbortSignal) {
    const ancestors: WorkspacePath[] = []
    for (let p = WorkspacePath.parent(path); p !== ''; p = WorkspacePath.parent(p))
      ancestors.push(p)
    const found = await Promise.all(ancestors.map((a) => head(keys.file(a), op, a, signal)))
    for (let i = ancestors.length - 1; i >= 0; i--) if (found[i] !== undefined) return ancestors[i]
    return undefined
  }

  /** Keep `dir` existing after its last entry went away (as a directory on disk would). */
  async function keepDirectory(dir: WorkspacePath, op: string) {
    if (dir === '') return
    if (!(await dirExists(dir, op)))
      await call(op, dir, () =>
        client.send(
          new PutObjectCommand({ Bucket: bucket, Key: keys.dir(dir), Body: new Uint8Array() }),
        ),
      )
  }

  async function conditionalWritesEnforced(): Promise<boolean> {
    if (conditional !== undefined) return conditional
    probing ??= probeConditionalWrites().then(
      (supported) => (conditional = supported),
      (error: unknown) => {
        probing = undefined
        throw error
      },
    )
    return probing
  }

  async function probeConditionalWrites(): Promise<boolean> {
    const key = keys.file(`.isoagent-probe-${randomHex(8)}` as WorkspacePath)
    const put = async (condition: Precondition): Promise<'ok' | 'refused' | 'unsupported'> => {
      try {
        await client.send(
          new PutObjectCommand({ Bucket: bucket, Key: key, Body: PROBE_BODY, ...condition }),
        )
        return 'ok'
      } catch (error) {
        if (isPreconditionFailure(error)) return 'refused'
        const status = statusOf(error)
        if (status === 501 || status === 400) return 'unsupported'
        throw fail(error, 'conditional-write probe')
      }
    }
    try {
      const first = await put({ IfNoneMatch: '*' })
      if (first !== 'ok') return false
      const again = await put({ IfNoneMatch: '*' })
      const wrong = await put({ IfMatch: '"00000000000000000000000000000000"' })
      return again === 'refused' && wrong === 'refused'
    } finally {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => {})
    }
  }

  /** Whether this client sends checksums by default (then multipart parts carry CRC32s). */
  async function checksumsByDefault(): Promise<boolean> {
    const config = client.config as { requestChecksumCalculation?: () => Promise<string> }
    try {
      return (await config.requestChecksumCalculation?.()) === 'WHEN_SUPPORTED'
    } catch {
      return false
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Reading

  /**
   * A GetObject of `[start, start + length)`: the body as a guarded stream, or undefined when
   * the range starts past the end of the object.
   */
  async function getBody(
    path: WorkspacePath,
    start: number,
    length: number | undefined,
    op: string,
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array> | undefined> {
    const key = keys.file(path)
    const wantsRange = start > 0 || length !== undefined
    const Range = wantsRange
      ? `bytes=${start}-${length === undefined ? '' : start + length - 1}`
      : undefined
    let out: GetObjectCommandOutput
    try {
      out = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, ...(Range ? { Range } : {}) }),
        httpOptions(signal),
      )
    } catch (error) {
      if (isUnsatisfiableRange(error)) return undefined
      if (isMissingKey(error)) {
        if (await dirExists(path, op, signal)) throw isDirectory(path)
        throw notFound(path)
      }
      throw fail(error, op, path)
    }
    const body = out.Body
    if (body === undefined) return new ReadableStream({ start: (c) => c.close() })
    // `Content-Range: bytes 0-0/0`: the object is empty, whatever else the store claims (s3rver
    // answers a range of an empty object that way, announcing one byte it never sends).
    const total = totalOf(out.ContentRange)
    if (total !== undefined && start >= total) {
      await body
        .transformToWebStream()
        .cancel()
        .catch(() => {})
      return undefined
    }
    // A store that ignores Range answers 200 with the whole object: clip it here.
    const ignoredRange =
      wantsRange && out.ContentRange === undefined && out.$metadata.httpStatusCode !== 206
    return guard(body.transformToWebStream(), {
      expected: out.ContentLength ?? rangeLength(out.ContentRange),
      skip: ignoredRange ? start : 0,
      take: ignoredRange ? length : undefined,
      fail: (error) => fail(error, op, path),
      short: (got, expected) =>
        new IsoagentError(
          'io',
          `S3 ${op} of ${WorkspacePath.display(path)} failed: the response ended after ${got} of ${expected} bytes`,
          { data: { op, bucket, path, received_bytes: got, expected_bytes: expected } },
        ),
    })
  }

  function normaliseRange(range: ByteRange = {}) {
    const start = Math.max(0, Math.floor(range.offset ?? 0))
    const length = range.length === undefined ? undefined : Math.max(0, Math.floor(range.length))
    return { start, length }
  }

  /** Fails like a read of `path` would when it is no file; used where no GET is needed. */
  async function requireFile(path: WorkspacePath, op: string) {
    if (path === '') throw isDirectory(path)
    if ((await head(keys.file(path), op, path)) !== undefined) return
    if (await dirExists(path, op)) throw isDirectory(path)
    throw notFound(path)
  }

  async function readAll(path: WorkspacePath, range?: ByteRange): Promise<Uint8Array> {
    if (path === '') throw isDirectory(path)
    const { start, length } = normaliseRange(range)
    if (length === 0) {
      await requireFile(path, 'read')
      return new Uint8Array()
    }
    const stream = await getBody(path, start, length, 'read')
    if (stream === undefined) return new Uint8Array()
    const chunks: Uint8Array[] = []
    let total = 0
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value)
      total += value.length
    }
    const only = chunks[0]
    if (
      chunks.length === 1 &&
      only!.byteOffset === 0 &&
      only!.byteLength === only!.buffer.byteLength
    )
      return only!
    const out = new Uint8Array(total)
    let at = 0
    for (const chunk of chunks) {
      out.set(chunk, at)
      at += chunk.length
    }
    return out
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  async function putObject(
    key: string,
    data: Uint8Array,
    condition: Precondition,
    path: string,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    if (data.length < threshold) {
      const out = await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: data,
          ContentLength: data.length,
          ...condition,
        }),
        httpOptions(signal),
      )
      return out.ETag
    }
    return multipartUpload(
      key,
      data.length,
      async (offset, size) => data.subarray(offset, offset + size),
      condition,
      path,
      signal,
    )
  }

  /** A multipart upload of `size` bytes whose parts come from `part`; aborted on any failure. */
  async function multipartUpload(
    key: string,
    size: number,
    part: (offset: number, size: number) => Promise<Uint8Array>,
    condition: Precondition,
    path: string,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const each = Math.max(partBytes, Math.ceil(size / MAX_PARTS))
    const count = Math.max(1, Math.ceil(size / each))
    const crc = await checksumsByDefault()
    const created = await client.send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        ...(crc ? { ChecksumAlgorithm: 'CRC32' } : {}),
      }),
      httpOptions(signal),
    )
    const UploadId = created.UploadId
    if (UploadId === undefined)
      throw new IsoagentError('io', `S3 write of ${path} failed: no upload id returned`, {
        data: { path },
      })
    try {
      const parts: CompletedPart[] = new Array(count)
      await mapLimit(
        Array.from({ length: count }, (_, i) => i),
        PART_CONCURRENCY,
        async (i) => {
          const offset = i * each
          const body = await part(offset, Math.min(each, size - offset))
          const out = await client.send(
            new UploadPartCommand({
              Bucket: bucket,
              Key: key,
              UploadId,
              PartNumber: i + 1,
              Body: body,
              ContentLength: body.length,
              ...(crc ? { ChecksumAlgorithm: 'CRC32' } : {}),
            }),
            httpOptions(signal),
          )
          parts[i] = {
            PartNumber: i + 1,
            ETag: out.ETag,
            ...(out.ChecksumCRC32 ? { ChecksumCRC32: out.ChecksumCRC32 } : {}),
          }
        },
      )
      const done = await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId,
          MultipartUpload: { Parts: parts },
          ...condition,
        }),
        httpOptions(signal),
      )
      return done.ETag
    } catch (error) {
      await client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }))
        .catch(() => {})
      throw error
    }
  }

  function conflict(path: string, expected: string | null, actual: string | null, message: string) {
    return new IsoagentError('version_conflict', message, { data: { path, expected, actual } })
  }

  async function write(
    path: WorkspacePath,
    data: Uint8Array,
    options: WriteOptions = {},
  ): Promise<WriteOutcome> {
    if (path === '') throw isDirectory(path)
    const key = keys.file(path)
    const { signal, precondition: pre } = options
    return withLock(key, async () => {
      const parent = WorkspacePath.parent(path)
      const [current, isDir, ancestor, parentExists] = await Promise.all([
        head(key, 'write', path, signal),
        exists(keys.dir(path), 'write', path, signal),
        fileAncestor(path, 'write', signal),
        options.createParents === false
          ? dirExists(parent, 'write', signal)
          : Promise.resolve(true),
      ])
      if (isDir) throw isDirectory(path)
      if (ancestor !== undefined)
        throw new IsoagentError('not_directory', `${ancestor} is a file, not a directory`, {
          data: { path, file: ancestor },
        })
      if (!parentExists) throw notFound(parent)
      const actual = current === undefined ? null : versionOf(current)
      if (pre?.ifAbsent && actual !== null)
        throw conflict(path, null, actual, `${path} was created by someone else meanwhile`)
      if (pre?.ifVersion !== undefined && actual !== pre.ifVersion)
        throw conflict(path, pre.ifVersion, actual, `${path} changed since it was read`)

      const condition: Precondition = {}
      if ((pre?.ifAbsent || pre?.ifVersion !== undefined) && (await conditionalWritesEnforced())) {
        if (pre.ifAbsent) condition.IfNoneMatch = '*'
        else if (pre.ifVersion !== undefined && !pre.ifVersion.startsWith('w:'))
          condition.IfMatch = quoted(pre.ifVersion)
      }
      let etag: string | undefined
      try {
        etag = await putObject(key, data, condition, path, signal)
      } catch (error) {
        const conditioned = condition.IfMatch !== undefined || condition.IfNoneMatch !== undefined
        if (
          conditioned &&
          (isPreconditionFailure(error) || (condition.IfMatch && isMissingKey(error)))
        ) {
          const now = await head(key, 'write', path).catch(() => undefined)
          throw conflict(
            path,
            pre?.ifVersion ?? null,
            now === undefined ? null : versionOf(now),
            pre?.ifAbsent
              ? `${path} was created by someone else meanwhile`
              : `${path} changed since it was read`,
          )
        }
        throw fail(error, 'write', path)
      }
      const version =
        etag !== undefined
          ? versionOf({ ETag: etag })
          : versionOf((await head(key, 'write', path)) ?? {})
      return { created: current === undefined, version }
    })
  }

  // ---------------------------------------------------------------------------------------------
  // Deleting, copying

  /** Delete `keyList` (all under the wall) in batches of 1000. */
  async function deleteKeys(keyList: string[], op: string, path: string) {
    for (let i = 0; i < keyList.length; i += DELETE_BATCH) {
      const batch = keyList.slice(i, i + DELETE_BATCH)
      for (const k of batch)
        if (!keys.contains(k))
          throw new IsoagentError('path_escape', `refusing to delete ${k}: outside the prefix`, {
            data: { path },
          })
      const out = await call(op, path, () =>
        client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        ),
      )
      const errors = out.Errors ?? []
      if (errors.length > 0) {
        const first = errors[0]!
        const denied = first.Code === 'AccessDenied'
        throw new IsoagentError(
          denied ? 'permission_denied' : 'io',
          `S3 could not delete ${errors.length} of ${batch.length} objects under ${WorkspacePath.display(path as WorkspacePath)} (${first.Code ?? 'error'})`,
          { data: { op, bucket, path, failed: errors.length, s3_code: first.Code } },
        )
      }
    }
  }

  /** Every key (with its size) starting with `dirPrefix`, all pages. */
  async function keysUnder(dirPrefix: string, op: string, path: string) {
    const found: { key: string; size: number }[] = []
    let token: string | undefined
    do {
      const out = await listV2(
        { Prefix: dirPrefix, MaxKeys: pageSize, ...(token ? { ContinuationToken: token } : {}) },
        op,
        path,
      )
      for (const o of out.objects)
        if (o.key.startsWith(dirPrefix)) found.push({ key: o.key, size: o.size ?? 0 })
      token = out.next
    } while (token !== undefined)
    return [...new Map(found.map((f) => [f.key, f])).values()]
  }

  /** Copy one object; part by part through this client when `CopyObject` cannot do it. */
  async function copyKey(from: string, to: string, size: number, op: string, path: string) {
    if (size <= MAX_COPY_OBJECT_BYTES) {
      try {
        await client.send(
          new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(bucket, from) }),
        )
        return
      } catch (error) {
        // Some S3-compatible stores decode CopySource wrongly (s3rver: keys with `+`, `,`, `;`…);
        // a missing source is then re-checked by the copy below, which reads it directly.
        if (!isMissingKey(error)) throw fail(error, op, path)
      }
    }
    const fromPath = from.slice(prefix.length) as WorkspacePath
    if (size < threshold) {
      const data = await readAll(fromPath)
      await call(op, path, () =>
        client.send(
          new PutObjectCommand({ Bucket: bucket, Key: to, Body: data, ContentLength: data.length }),
        ),
      )
      return
    }
    try {
      await multipartUpload(
        to,
        size,
        async (offset, length) => {
          const bytes = await readAll(fromPath, { offset, length })
          if (bytes.length !== length)
            throw new IsoagentError('version_conflict', `${fromPath} changed while it was copied`, {
              data: { path: fromPath, expected: null, actual: null },
            })
          return bytes
        },
        {},
        path,
      )
    } catch (error) {
      throw fail(error, op, path)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The port

  async function stat(path: WorkspacePath): Promise<WorkspaceStat | undefined> {
    if (path === '') return { path, kind: 'directory', size: 0, version: 'dir' }
    const found = await head(keys.file(path), 'stat', path)
    if (found !== undefined) {
      return {
        path,
        kind: 'file',
        size: found.ContentLength ?? 0,
        ...(found.LastModified ? { mtimeMs: found.LastModified.getTime() } : {}),
        version: versionOf(found),
      }
    }
    if (await dirExists(path, 'stat')) return { path, kind: 'directory', size: 0, version: 'dir' }
    return undefined
  }

  const capabilities = {
    read: true,
    write: true,
    exec: false,
    git: false,
    search: true,
    atomicRename: true,
    symlinks: false,
    /** True when the store is known to enforce `If-Match`/`If-None-Match`. */
    get conditionalWrite() {
      return conditional === true
    },
  }

  return {
    capabilities,
    descriptor: { kind: 's3', bucket, prefix },
    conditionalWritesEnforced,

    stat,

    read: readAll,

    async readStream(path, range) {
      if (path === '') throw isDirectory(path)
      const { start, length } = normaliseRange(range)
      if (length === 0) await requireFile(path, 'read')
      const stream = length === 0 ? undefined : await getBody(path, start, length, 'read')
      return stream ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() })
    },

    write,

    async list(path, listOptions: ListOptions = {}): Promise<ListPage> {
      const base = keys.dir(path)
      const { signal } = listOptions
      const { page, sawAny } = await listDirectory(
        {
          page: ({ token, startAfter }) =>
            listV2(
              {
                Prefix: base,
                Delimiter: '/',
                MaxKeys: pageSize,
                ...(token !== undefined ? { ContinuationToken: token } : {}),
                ...(token === undefined && startAfter !== undefined
                  ? { StartAfter: startAfter }
                  : {}),
              },
              'list',
              path,
              signal,
            ),
          exists: (dirPrefix) => exists(dirPrefix, 'list', path, signal),
        },
        base,
        { after: listOptions.after, limit: listOptions.limit },
      )
      if (sawAny || path === '') return page
      if (listOptions.after !== undefined && (await dirExists(path, 'list', signal))) return page
      if ((await head(keys.file(path), 'list', path, signal)) !== undefined)
        throw new IsoagentError('not_directory', `${path} is a file, not a directory`, {
          data: { path },
        })
      throw notFound(path)
    },

    async mkdir(path) {
      if (path === '') return
      const key = keys.dir(path)
      const [self, ancestor, already] = await Promise.all([
        head(keys.file(path), 'mkdir', path),
        fileAncestor(path, 'mkdir'),
        exists(key, 'mkdir', path),
      ])
      if (ancestor !== undefined)
        throw new IsoagentError('not_directory', `${ancestor} is a file, not a directory`, {
          data: { path, file: ancestor },
        })
      if (self !== undefined)
        throw new IsoagentError('already_exists', `${path} is a file`, { data: { path } })
      if (already) return
      await call('mkdir', path, () =>
        client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: new Uint8Array() })),
      )
    },

    async remove(path, removeOptions = {}) {
      if (path === '')
        throw new IsoagentError('invalid_argument', 'refusing to remove the workspace root')
      const key = keys.file(path)
      if ((await head(key, 'remove', path)) !== undefined) {
        await withLock(key, () =>
          call('remove', path, () =>
            client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })),
          ),
        )
        await keepDirectory(WorkspacePath.parent(path), 'remove')
        return
      }
      const base = keys.dir(path)
      const some = await listV2({ Prefix: base, MaxKeys: 2 }, 'remove', path)
      const found = some.objects.map((o) => o.key).filter((k) => k.startsWith(base))
      if (found.length === 0) throw notFound(path)
      const empty = found.every((k) => k === base)
      if (!empty && removeOptions.recursive !== true)
        throw new IsoagentError('not_empty', `${path} is not empty`, { data: { path } })
      if (empty)
        await call('remove', path, () =>
          client.send(new DeleteObjectCommand({ Bucket: bucket, Key: base })),
        )
      else
        await deleteKeys(
          (await keysUnder(base, 'remove', path)).map((k) => k.key),
          'remove',
          path,
        )
      await keepDirectory(WorkspacePath.parent(path), 'remove')
    },

    async rename(from, to) {
      if (from === '' || to === '')
        throw new IsoagentError(
          'invalid_argument',
          'the workspace root cannot be renamed or replaced',
        )
      if (from === to) {
        if ((await stat(from)) === undefined) throw notFound(from)
        return
      }
      const fromKey = keys.file(from)
      const toKey = keys.file(to)
      const source = await head(fromKey, 'rename', from)
      const [toFile, toDirKeys, ancestor] = await Promise.all([
        head(toKey, 'rename', to),
        listV2({ Prefix: keys.dir(to), MaxKeys: 2 }, 'rename', to).then((out) =>
          out.objects.map((o) => o.key),
        ),
        fileAncestor(to, 'rename'),
      ])
      if (ancestor !== undefined)
        throw new IsoagentError('not_directory', `${ancestor} is a file, not a directory`, {
          data: { path: to, file: ancestor },
        })

      if (source !== undefined) {
        if (toDirKeys.length > 0) throw isDirectory(to)
        // Both keys locked, always in the same order, so opposite renames cannot deadlock.
        const [first, second] = [fromKey, toKey].sort()
        await withLock(first!, () =>
          withLock(second!, async () => {
            await copyKey(fromKey, toKey, source.ContentLength ?? 0, 'rename', from)
            await call('rename', from, () =>
              client.send(new DeleteObjectCommand({ Bucket: bucket, Key: fromKey })),
            )
          }),
        )
        await keepDirectory(WorkspacePath.parent(from), 'rename')
        return
      }

      const fromBase = keys.dir(from)
      const toBase = keys.dir(to)
      if (to.startsWith(from + '/'))
        throw new IsoagentError('invalid_argument', `cannot move ${from} into itself (${to})`, {
          data: { path: from, to },
        })
      const all = await keysUnder(fromBase, 'rename', from)
      if (all.length === 0) throw notFound(from)
      if (toFile !== undefined)
        throw new IsoagentError('not_directory', `${to} is a file, not a directory`, {
          data: { path: to },
        })
      if (toDirKeys.some((k) => k !== toBase))
        throw new IsoagentError('not_empty', `${to} is not empty`, { data: { path: to } })
      // Every target key is checked before anything is copied; markers (`…/`) stay markers.
      const targets = all.map(({ key, size }) => {
        const rest = key.slice(fromBase.length)
        const target =
          rest === ''
            ? toBase
            : rest.endsWith('/')
              ? keys.check(`${to}/${rest.slice(0, -1)}`, '/')
              : keys.check(`${to}/${rest}`, '')
        return { from: key, to: target, size }
      })
      await mapLimit(targets, COPY_CONCURRENCY, (t) =>
        copyKey(t.from, t.to, t.size, 'rename', from),
      )
      await deleteKeys(
        all.map((k) => k.key),
        'rename',
        from,
      )
      await keepDirectory(WorkspacePath.parent(from), 'rename')
    },

    async close() {
      if (ownsClient) client.destroy()
    },
  } satisfies S3WorkspaceServices
}

/** A key from a listing answered with `EncodingType: url` (form encoding: `+` is a space). */
function decodeListedKey(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    return value
  }
}

/** The complete length a `Content-Range: bytes a-b/n` announces (undefined for `*`). */
function totalOf(contentRange: string | undefined): number | undefined {
  const match = /^bytes [^/]*\/(\d+)$/.exec(contentRange ?? '')
  return match ? Number(match[1]) : undefined
}

/** Bytes a `Content-Range: bytes a-b/n` announces, for responses without a Content-Length. */
function rangeLength(contentRange: string | undefined): number | undefined {
  const match = /^bytes (\d+)-(\d+)\//.exec(contentRange ?? '')
  return match ? Number(match[2]) - Number(match[1]) + 1 : undefined
}

interface GuardOptions {
  /** Bytes the response announced (Content-Length), checked when the body ends. */
  expected: number | undefined
  /** Bytes to drop first, and at most how many to pass on (a Range the store ignored). */
  skip: number
  take: number | undefined
  fail(error: unknown): IsoagentError
  short(received: number, expected: number): IsoagentError
}

/**
 * `source` passed on chunk by chunk as plain `Uint8Array`s, failing with a typed error when it
 * errors or ends short of its announced length; cancelling it cancels the response.
 */
function guard(
  source: ReadableStream<Uint8Array>,
  options: GuardOptions,
): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  let received = 0
  let skip = options.skip
  let left = options.take ?? Number.POSITIVE_INFINITY
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (left <= 0) {
          await reader.cancel().catch(() => {})
          controller.close()
          return
        }
        let step: ReadableStreamReadResult<Uint8Array>
        try {
          step = await reader.read()
        } catch (error) {
          controller.error(options.fail(error))
          return
        }
        if (step.done) {
          if (options.expected !== undefined && received !== options.expected)
            controller.error(options.short(received, options.expected))
          else controller.close()
          return
        }
        const value = step.value
        received += value.length
        let chunk = new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
        if (skip > 0) {
          if (chunk.length <= skip) {
            skip -= chunk.length
            continue
          }
          chunk = chunk.subarray(skip)
          skip = 0
        }
        if (chunk.length > left) chunk = chunk.subarray(0, left)
        left -= chunk.length
        if (chunk.length > 0) {
          controller.enqueue(chunk)
          return
        }
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => {})
    },
  })
}
