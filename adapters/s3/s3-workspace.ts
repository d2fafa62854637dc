import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { IsoagentError, type WorkspaceServices } from '../../src/index.ts'
import { KeySpace, normalisePrefix, objectStoreWorkspace } from '../../src/object-store/index.ts'
import { s3ObjectStore } from './s3-object-store.ts'

const MiB = 1024 * 1024
/** Writes of at least this many bytes go through a multipart upload (default 8 MiB). */
export const DEFAULT_MULTIPART_THRESHOLD = 8 * MiB
/** Size of each multipart part (default 8 MiB; S3 needs ≥ 5 MiB for all but the last). */
export const DEFAULT_PART_BYTES = 8 * MiB
export { MAX_COPY_OBJECT_BYTES } from './s3-object-store.ts'
const MIN_PART_BYTES = 5 * MiB

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
 *   the object-store core for how its pages stay exact although S3's order is not the port's.
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
  const multipartThreshold = checkSize(
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
  const store = s3ObjectStore({
    client: options.client ?? new S3Client(options.clientConfig ?? {}),
    ownsClient: options.client === undefined,
    bucket,
    keys,
    multipartThreshold,
    partBytes,
    conditionalWrites: mode,
  })
  const workspace = objectStoreWorkspace(store, {
    keys,
    pageSize,
    descriptor: { kind: 's3', bucket, prefix },
  })
  return { ...workspace, conditionalWritesEnforced: () => store.conditionalWrites() }
}
