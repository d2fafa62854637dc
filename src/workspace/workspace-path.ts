import { IsoagentError } from '../errors.ts'

/**
 * A normalised path inside a workspace: relative, `/`-separated, no `.` or `..` segments, no
 * empty segments; `''` is the workspace root. Only {@link WorkspacePath.parse} makes one.
 */
export type WorkspacePath = string & { readonly __workspacePath: unique symbol }

/** Longest accepted path, in UTF-16 code units. */
export const MAX_PATH_LENGTH = 4096
/** Longest accepted path segment, in UTF-8 bytes. */
export const MAX_SEGMENT_BYTES = 255

// Control characters (C0, DEL, C1) never belong in a path a model sends.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
// Percent-encoded dots, separators and NUL: decoded somewhere down the line (HTTP, S3), they escape.
const ENCODED = /%(2e|2f|5c|00)/i
const encoder = new TextEncoder()

function invalid(input: string, reason: string): IsoagentError {
  return new IsoagentError('invalid_path', `invalid path ${JSON.stringify(input)}: ${reason}`, {
    data: { path: input },
  })
}

/** Options for {@link WorkspacePath.parse}. */
export interface ParsePathOptions {
  /**
   * Absolute root the workspace stands for (a local directory, or `/` for virtual workspaces).
   * Absolute input is accepted only inside it.
   */
  root?: string
}

function parse(input: string, options: ParsePathOptions = {}): WorkspacePath {
  if (typeof input !== 'string') throw invalid(String(input), 'not a string')
  if (input.length > MAX_PATH_LENGTH)
    throw invalid(input.slice(0, 64) + '…', `longer than ${MAX_PATH_LENGTH} characters`)
  if (CONTROL.test(input)) throw invalid(input, 'contains a NUL or control character')
  if (input.includes('\\')) throw invalid(input, 'contains a backslash; use / as the separator')
  if (ENCODED.test(input)) throw invalid(input, 'contains a percent-encoded dot, separator or NUL')

  let rest = input
  if (rest.startsWith('/')) {
    const root = normaliseRoot(options.root ?? '/')
    if (root === '/') rest = rest.slice(1)
    else if (rest === root || rest === root + '/') rest = ''
    else if (rest.startsWith(root + '/')) rest = rest.slice(root.length + 1)
    else {
      throw new IsoagentError(
        'path_escape',
        `path ${JSON.stringify(input)} is outside the workspace root ${root}`,
        {
          data: { path: input, root },
        },
      )
    }
  } else if (/^[A-Za-z]:/.test(rest)) {
    throw invalid(input, 'drive-letter paths are not workspace paths')
  }

  const stack: string[] = []
  for (const segment of rest.split('/')) {
    if (segment === '' || segment === '.') continue
    if (segment === '..') {
      if (stack.length === 0) {
        throw new IsoagentError(
          'path_escape',
          `path ${JSON.stringify(input)} escapes the workspace root`,
          {
            data: { path: input },
          },
        )
      }
      stack.pop()
      continue
    }
    if (encoder.encode(segment).length > MAX_SEGMENT_BYTES) {
      throw invalid(input, `a segment is longer than ${MAX_SEGMENT_BYTES} bytes`)
    }
    stack.push(segment)
  }
  return stack.join('/') as WorkspacePath
}

function normaliseRoot(root: string): string {
  const trimmed = root.replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
}

/** Helpers for {@link WorkspacePath}. */
export const WorkspacePath = {
  /**
   * Normalise and contain `input`. Throws `IsoagentError` `invalid_path` (NUL, control
   * characters, backslashes, percent-encoded separators, overlong) or `path_escape` (`..`
   * above the root, absolute paths outside it).
   */
  parse,
  /**
   * Whether `input` is in the form listings give paths ({@link WorkspacePath.child} of names a
   * directory holds): relative, `/`-separated, no empty, `.` or `..` segment, no NUL, within the
   * length limits. It may hold what {@link WorkspacePath.parse} refuses in paths a model sends
   * (a backslash, a tab, `%2e`, `C:`), which are ordinary file names on POSIX systems; a position
   * a tool handed out (a cursor) is checked with this.
   */
  isNormal(input: unknown): input is WorkspacePath {
    if (typeof input !== 'string') return false
    if (input === '') return true
    if (input.length > MAX_PATH_LENGTH || input.includes('\0')) return false
    return input
      .split('/')
      .every(
        (s) => s !== '' && s !== '.' && s !== '..' && encoder.encode(s).length <= MAX_SEGMENT_BYTES,
      )
  },
  /** The workspace root. */
  root: '' as WorkspacePath,
  /** `base` joined with a single entry name (which must not contain `/`). */
  child(base: WorkspacePath, name: string): WorkspacePath {
    return (base === '' ? name : `${base}/${name}`) as WorkspacePath
  },
  /** Parent directory (the root's parent is the root). */
  parent(path: WorkspacePath): WorkspacePath {
    const at = path.lastIndexOf('/')
    return (at < 0 ? '' : path.slice(0, at)) as WorkspacePath
  },
  /** Last segment (`''` for the root). */
  basename(path: WorkspacePath): string {
    return path.slice(path.lastIndexOf('/') + 1)
  },
  /** Human form: `.` for the root, else the path itself. */
  display(path: WorkspacePath): string {
    return path === '' ? '.' : path
  },
} as const
