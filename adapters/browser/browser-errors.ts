import { IsoagentError, WorkspacePath, type IsoagentErrorCode } from '../../src/index.ts'

// lightning-fs and IndexedDB failures of the browser workspace as typed errors.

const ERRNO: Record<string, IsoagentErrorCode> = {
  ENOENT: 'not_found',
  EEXIST: 'already_exists',
  ENOTDIR: 'not_directory',
  EISDIR: 'is_directory',
  ENOTEMPTY: 'not_empty',
}

export const show = (path: string) => WorkspacePath.display(path as WorkspacePath)

/** IndexedDB refused to store more for this origin (Chromium/WebKit name, then Firefox's). */
function isQuotaError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED'
}

function quotaError(path: string, op: string, cause: unknown): IsoagentError {
  return new IsoagentError(
    'io',
    `storage quota exceeded: the browser refused to store more data while trying to ${op} ${show(path)}; nothing was written (free space in this origin's storage or write less)`,
    { data: { path, reason: 'quota_exceeded' }, cause },
  )
}

/** A lightning-fs (or IndexedDB) failure as an IsoagentError. */
export function fromFsError(error: unknown, path: string, op: string): IsoagentError {
  if (error instanceof IsoagentError) return error
  if (isQuotaError(error)) return quotaError(path, op, error)
  const code = String((error as { code?: unknown } | null)?.code ?? '')
  const mapped = ERRNO[code] ?? 'io'
  const message =
    mapped === 'not_found'
      ? `not found: ${show(path)}`
      : mapped === 'io'
        ? `${op} ${show(path)} failed: ${code || (error instanceof Error ? error.message : String(error))}`
        : `${op} ${show(path)}: ${mapped.replace('_', ' ')}`
  return new IsoagentError(mapped, message, { data: { path, errno: code || null }, cause: error })
}

/** `not_directory`: `at`, on the way to `path`, is a file. */
export const notDirectory = (path: string, at: string) =>
  new IsoagentError('not_directory', `${show(at)} is a file, not a directory`, {
    data: { path, at },
  })

/** `unsupported`: `path` is, or goes through, the symbolic link `at`. */
export const throughSymlink = (path: string, at: string) =>
  new IsoagentError(
    'unsupported',
    at === path
      ? `${show(path)} is a symbolic link; browser workspaces do not follow symlinks`
      : `${show(path)} goes through the symbolic link ${show(at)}; browser workspaces do not follow symlinks`,
    { data: { path, symlink: at } },
  )
