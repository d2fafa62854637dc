import { IsoagentError } from '../../src/index.ts'
import { KeySpace, normalisePrefix, objectStoreWorkspace } from '../../src/object-store/index.ts'
import type { WorkspaceServices } from '../../src/index.ts'
import type { R2BucketLike } from './r2-bucket.ts'
import { r2ObjectStore } from './r2-object-store.ts'

const MAX_LIST_LIMIT = 1000

/** Options of {@link r2Workspace}. */
export interface R2WorkspaceOptions {
  /**
   * Key prefix that is the workspace root, and a wall: no key outside it is ever read, listed or
   * written. `'team/repo'` and `'team/repo/'` are the same; default `''`, the whole bucket.
   */
  prefix?: string
  /**
   * Name of the binding (default `'BUCKET'`): shown in messages and kept in the session
   * snapshot's descriptor, so a Worker can rebind it on resume.
   */
  binding?: string
  /** Keys asked for per `list` call (1..1000, default 1000, R2's maximum). */
  listPageSize?: number
}

/** An R2 workspace: the port, with its descriptor. */
export interface R2WorkspaceServices extends WorkspaceServices {
  readonly descriptor: { kind: 'r2'; binding: string; prefix: string }
}

function isBucket(value: unknown): value is R2BucketLike {
  if (typeof value !== 'object' || value === null) return false
  const b = value as Record<string, unknown>
  return ['head', 'get', 'put', 'list', 'delete'].every((m) => typeof b[m] === 'function')
}

/**
 * A workspace in a Cloudflare R2 bucket, over the Workers binding (`env.BUCKET`), under a key
 * prefix. The same model as the S3 workspace:
 *
 * - **Files** are objects: `key = prefix + path`. A read of a range is one `get` with `range`
 *   (only those bytes travel); `stat` is a `head`: size, `mtimeMs` (upload time) and
 *   `version` = the object's etag.
 * - **Directories** are key prefixes: a directory exists when any key starts with `dir/` (a
 *   zero-byte marker object `dir/` counts, and `mkdir` writes one). Listings use `list` with
 *   delimiter `/`, `startAfter` and cursors, every page; removing a directory's last entry leaves
 *   a marker, so the directory stays, as on disk.
 * - **Writes** are one `put` (atomic: readers see the old or the new object). Preconditions are
 *   enforced by R2 itself: `ifVersion` is sent as `onlyIf: { etagMatches }` and `ifAbsent` as
 *   `onlyIf: { etagDoesNotMatch: '*' }`; R2 refuses a put whose condition no longer holds, so of
 *   two concurrent edits from one version exactly one lands and the other is a
 *   `version_conflict`, whoever runs them (`capabilities.conditionalWrite` is true).
 * - **remove** deletes one object, or every key under `dir/` in batches of 1000. **rename** copies
 *   (a `get` then a `put`: the binding has no copy) and then deletes; directories are renamed key
 *   by key, all copies first. Neither is atomic across keys.
 * - **The prefix is a wall**: keys are rebuilt from normalised paths and checked again, and every
 *   key a listing returns is checked to lie under the prefix before it is shown or deleted.
 *
 * Capabilities: read, write, search; no exec, git, symlinks or local root (no `bash`, `git` or
 * `download`). Git is withheld for the reasons it is on S3: git moves refs and the index into
 * place with lock-file-and-rename, and R2 has no rename (a copy then a delete, neither atomic) and
 * no conditional delete, so an interrupted or concurrent commit could leave a branch pointing at
 * objects that never landed. Clone into a memory workspace to use git on the files.
 */
export function r2Workspace(
  bucket: R2BucketLike,
  options: R2WorkspaceOptions = {},
): R2WorkspaceServices {
  if (!isBucket(bucket))
    throw new IsoagentError(
      'invalid_argument',
      'r2Workspace needs an R2 bucket binding (an object with head, get, put, list and delete)',
    )
  if (typeof options !== 'object' || options === null)
    throw new IsoagentError('invalid_argument', 'r2Workspace options must be { prefix?, binding? }')
  const binding = options.binding ?? 'BUCKET'
  // eslint-disable-next-line no-control-regex
  if (typeof binding !== 'string' || binding === '' || /[\u0000-\u001f\u007f]/.test(binding))
    throw new IsoagentError('invalid_argument', 'binding must be a non-empty name')
  const pageSize = options.listPageSize ?? MAX_LIST_LIMIT
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_LIST_LIMIT)
    throw new IsoagentError('invalid_argument', `listPageSize must be an integer in 1..1000`)
  const prefix = normalisePrefix(options.prefix, 'R2')
  return objectStoreWorkspace(r2ObjectStore(bucket, binding), {
    keys: new KeySpace(prefix, 'R2'),
    pageSize,
    descriptor: { kind: 'r2', binding, prefix },
  })
}
