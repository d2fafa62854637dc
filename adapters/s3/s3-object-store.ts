import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { IsoagentError, type WorkspacePath } from '../../src/index.ts'
import type {
  KeySpace,
  ListRequest,
  ObjectBody,
  ObjectHead,
  ObjectPage,
  ObjectRange,
  ObjectStore,
  PutCondition,
  ReadObject,
} from '../../src/object-store/index.ts'
import {
  isMissingKey,
  isPreconditionFailure,
  isUnsatisfiableRange,
  PartialDeleteError,
  s3Error,
  statusOf,
} from './s3-errors.ts'
import { multipartUpload } from './s3-multipart.ts'

const MiB = 1024 * 1024
/** Largest object a single `CopyObject` may copy; larger ones are copied part by part. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 * MiB
const PROBE_BODY = new TextEncoder().encode('isoagent conditional-write probe\n')

/** How the S3 driver reaches its bucket. */
export interface S3StoreConfig {
  client: S3Client
  /** Destroy the client on `close()` (the workspace created it). */
  ownsClient: boolean
  bucket: string
  /** The workspace's keys: where the conditional-write probe may put its object. */
  keys: KeySpace
  /** Writes of at least this many bytes use a multipart upload. */
  multipartThreshold: number
  partBytes: number
  /** See `S3WorkspaceOptions.conditionalWrites`. */
  conditionalWrites: 'auto' | boolean
}

interface S3Condition {
  IfMatch?: string
  IfNoneMatch?: string
}

const httpOptions = (signal?: AbortSignal) =>
  signal === undefined ? undefined : { abortSignal: signal }

/** The version of an object: its ETag without quotes (or a weak stand-in when it has none). */
function versionOf(head: { ETag?: string; LastModified?: Date; ContentLength?: number }): string {
  const etag = head.ETag?.replace(/^W\//, '').replace(/^"(.*)"$/, '$1')
  if (etag !== undefined && etag !== '') return etag
  return `w:${head.ContentLength ?? 0}:${head.LastModified?.getTime() ?? 0}`
}

/** The headers of a `put` condition; a weak version (`w:…`) is no ETag, so it is not sent. */
function headersOf(condition: PutCondition | undefined): S3Condition {
  if (condition === undefined) return {}
  if ('ifNoneMatch' in condition) return { IfNoneMatch: '*' }
  const version = condition.ifMatch
  if (version.startsWith('w:')) return {}
  return { IfMatch: version.startsWith('"') ? version : `"${version}"` }
}

/**
 * The S3 driver of the object-store core: `HeadObject`, ranged `GetObject`, `PutObject` (multipart
 * from the threshold on) with `If-Match`/`If-None-Match`, `DeleteObject(s)`, `ListObjectsV2` and
 * `CopyObject`, over one client and bucket. Under `conditionalWrites: 'auto'` it probes once
 * whether the store enforces conditions.
 */
export function s3ObjectStore(config: S3StoreConfig): ObjectStore {
  const { client, bucket } = config
  let conditional = config.conditionalWrites === 'auto' ? undefined : config.conditionalWrites
  let probing: Promise<boolean> | undefined
  return {
    name: 'S3',
    errorData: { bucket },
    get conditionsEnforced() {
      return conditional === true
    },
    async conditionalWrites() {
      if (conditional !== undefined) return conditional
      probing ??= probeConditionalWrites(config).then(
        (supported) => (conditional = supported),
        (error: unknown) => {
          probing = undefined
          throw error
        },
      )
      return probing
    },
    head: (key, signal) => headObject(config, key, signal),
    get: (key, range, signal) => getObject(config, key, range, signal),
    put: (key, data, condition, signal) => putObject(config, key, data, condition, signal),
    delete: (keys) => deleteObjects(config, keys),
    list: (request, signal) => listObjects(config, request, signal),
    copy: (from, to, size, read) => copyObject(config, from, to, size, read),
    error: (error, at) => s3Error(error, { ...at, bucket }),
    async close() {
      if (config.ownsClient) client.destroy()
    },
  } satisfies ObjectStore
}

async function headObject(
  { client, bucket }: S3StoreConfig,
  key: string,
  signal?: AbortSignal,
): Promise<ObjectHead | undefined> {
  try {
    const out = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: key }),
      httpOptions(signal),
    )
    const head = { size: out.ContentLength ?? 0, version: versionOf(out) }
    return out.LastModified ? { ...head, mtimeMs: out.LastModified.getTime() } : head
  } catch (error) {
    if (isMissingKey(error)) return undefined
    throw error
  }
}

/** A `GetObject` of the range, clipped and checked by the core (see {@link ObjectBody}). */
async function getObject(
  { client, bucket }: S3StoreConfig,
  key: string,
  { start, length }: ObjectRange,
  signal?: AbortSignal,
): Promise<ObjectBody | 'missing' | 'empty'> {
  const wantsRange = start > 0 || length !== undefined
  const Range = wantsRange
    ? `bytes=${start}-${length === undefined ? '' : start + length - 1}`
    : undefined
  let out
  try {
    out = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key, ...(Range ? { Range } : {}) }),
      httpOptions(signal),
    )
  } catch (error) {
    if (isUnsatisfiableRange(error)) return 'empty'
    if (isMissingKey(error)) return 'missing'
    throw error
  }
  if (out.Body === undefined) return 'empty'
  const body = out.Body.transformToWebStream()
  // `Content-Range: bytes 0-0/0`: the object is empty, whatever else the store claims (s3rver
  // answers a range of an empty object that way, announcing one byte it never sends).
  const total = totalOf(out.ContentRange)
  if (total !== undefined && start >= total) {
    await body.cancel().catch(() => {})
    return 'empty'
  }
  // A store that ignores Range answers 200 with the whole object: the core clips it.
  const ignoredRange =
    wantsRange && out.ContentRange === undefined && out.$metadata.httpStatusCode !== 206
  const expected = out.ContentLength ?? rangeLength(out.ContentRange)
  return {
    body,
    ...(expected === undefined ? {} : { expected }),
    ...(ignoredRange ? { skip: start, ...(length === undefined ? {} : { take: length }) } : {}),
  }
}

/** One `PutObject`, or a multipart upload from the threshold on; `'conflict'`: refused. */
async function putObject(
  config: S3StoreConfig,
  key: string,
  data: Uint8Array,
  condition: PutCondition | undefined,
  signal?: AbortSignal,
): Promise<{ version?: string } | 'conflict'> {
  const { client, bucket } = config
  const headers = headersOf(condition)
  let etag: string | undefined
  try {
    if (data.length < config.multipartThreshold) {
      const input = { Bucket: bucket, Key: key, Body: data, ContentLength: data.length }
      const out = await client.send(
        new PutObjectCommand({ ...input, ...headers }),
        httpOptions(signal),
      )
      etag = out.ETag
    } else {
      const target = { client, bucket, key, partBytes: config.partBytes, condition: headers }
      etag = await multipartUpload(
        signal === undefined ? target : { ...target, signal },
        data.length,
        async (offset, size) => data.subarray(offset, offset + size),
      )
    }
  } catch (error) {
    const conditioned = headers.IfMatch !== undefined || headers.IfNoneMatch !== undefined
    const refused =
      isPreconditionFailure(error) || (headers.IfMatch !== undefined && isMissingKey(error))
    if (conditioned && refused) return 'conflict'
    throw error
  }
  return etag === undefined ? {} : { version: versionOf({ ETag: etag }) }
}

/** One `DeleteObject`, or `DeleteObjects` for more keys (its per-key errors thrown). */
async function deleteObjects({ client, bucket }: S3StoreConfig, keys: readonly string[]) {
  if (keys.length === 1) {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[0]! }))
    return
  }
  const out = await client.send(
    new DeleteObjectsCommand({
      Bucket: bucket,
      Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
    }),
  )
  const errors = out.Errors ?? []
  if (errors.length > 0) throw new PartialDeleteError(errors.length, keys.length, errors[0]!.Code)
}

/**
 * One `ListObjectsV2` page, keys URL-encoded on the wire (`EncodingType: url`, so keys with
 * characters XML 1.0 cannot carry still parse) and decoded here.
 */
async function listObjects(
  { client, bucket }: S3StoreConfig,
  request: ListRequest,
  signal?: AbortSignal,
): Promise<ObjectPage> {
  const out = await client.send(
    new ListObjectsV2Command({
      Bucket: bucket,
      EncodingType: 'url',
      Prefix: request.prefix,
      ...(request.delimiter === undefined ? {} : { Delimiter: request.delimiter }),
      MaxKeys: request.limit,
      ...(request.cursor === undefined ? {} : { ContinuationToken: request.cursor }),
      ...(request.startAfter === undefined ? {} : { StartAfter: request.startAfter }),
    }),
    httpOptions(signal),
  )
  const decode = (value: string | undefined) =>
    value === undefined || out.EncodingType !== 'url' ? value : decodeListedKey(value)
  const objects: ObjectPage['objects'] = []
  for (const c of out.Contents ?? []) {
    const key = decode(c.Key)
    if (key !== undefined) objects.push({ key, size: c.Size ?? 0 })
  }
  const prefixes: string[] = []
  for (const c of out.CommonPrefixes ?? []) {
    const prefix = decode(c.Prefix)
    if (prefix !== undefined) prefixes.push(prefix)
  }
  const cursor = out.IsTruncated ? out.NextContinuationToken : undefined
  return cursor ? { objects, prefixes, cursor } : { objects, prefixes }
}

/** `CopyObject`; part by part through this client past 5 GiB or when the store cannot do it. */
async function copyObject(
  config: S3StoreConfig,
  from: string,
  to: string,
  size: number,
  read: ReadObject,
): Promise<void> {
  const { client, bucket } = config
  if (size <= MAX_COPY_OBJECT_BYTES) {
    try {
      await client.send(
        new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(bucket, from) }),
      )
      return
    } catch (error) {
      // Some S3-compatible stores decode CopySource wrongly (s3rver: keys with `+`, `,`, `;`…);
      // a missing source is then re-checked by the copy below, which reads it directly.
      if (!isMissingKey(error)) throw error
    }
  }
  if (size < config.multipartThreshold) {
    const data = await read(from)
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: to, Body: data, ContentLength: data.length }),
    )
    return
  }
  const fromPath = from.slice(config.keys.prefix.length) as WorkspacePath
  const target = { client, bucket, key: to, partBytes: config.partBytes, condition: {} }
  await multipartUpload(target, size, async (offset, length) => {
    const bytes = await read(from, { start: offset, length })
    if (bytes.length !== length)
      throw new IsoagentError('version_conflict', `${fromPath} changed while it was copied`, {
        data: { path: fromPath, expected: null, actual: null },
      })
    return bytes
  })
}

/**
 * Whether the store enforces `If-None-Match`/`If-Match`: a hidden object inside the prefix is put
 * with `If-None-Match: *` twice, then with a wrong `If-Match`; both repeats must be refused. The
 * probe object is deleted again.
 */
async function probeConditionalWrites({ client, bucket, keys }: S3StoreConfig): Promise<boolean> {
  const key = keys.file(`.isoagent-probe-${randomHex(8)}` as WorkspacePath)
  const put = async (condition: S3Condition): Promise<'ok' | 'refused' | 'unsupported'> => {
    try {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: PROBE_BODY, ...condition }),
      )
      return 'ok'
    } catch (error) {
      if (isPreconditionFailure(error)) return 'refused'
      const status = statusOf(error)
      if (status === 501 || status === 400) return 'unsupported'
      throw s3Error(error, { op: 'conditional-write probe', bucket })
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

function randomHex(bytes: number): string {
  const data = crypto.getRandomValues(new Uint8Array(bytes))
  return [...data].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** `CopySource` for `key` in `bucket`: every segment URL-encoded, as S3 expects. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`
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
