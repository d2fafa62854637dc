import { IsoagentError, type IsoagentErrorCode } from '../../src/errors.ts'
import { WorkspacePath } from '../../src/workspace/workspace-path.ts'

// Node's errno failures of the local workspace as typed errors.

const ERRNO: Record<string, IsoagentErrorCode> = {
  ENOENT: 'not_found',
  EISDIR: 'is_directory',
  ENOTDIR: 'not_directory',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  ENOTEMPTY: 'not_empty',
  EEXIST: 'already_exists',
  ELOOP: 'path_escape',
  // open(2) of a socket file
  ENXIO: 'invalid_argument',
}

/** A failed `op` on `path` as an {@link IsoagentError} (one passes through unchanged). */
export function fromErrno(error: unknown, path: string, op: string): IsoagentError {
  if (error instanceof IsoagentError) return error
  const code = (error as NodeJS.ErrnoException).code ?? ''
  const mapped = ERRNO[code] ?? 'io'
  const shown = WorkspacePath.display(path as WorkspacePath)
  const message =
    mapped === 'not_found'
      ? `not found: ${shown}`
      : mapped === 'io'
        ? `${op} ${shown} failed: ${code || (error as Error).message}`
        : `${op} ${shown}: ${mapped.replace('_', ' ')}`
  return new IsoagentError(mapped, message, { data: { path, errno: code }, cause: error })
}
