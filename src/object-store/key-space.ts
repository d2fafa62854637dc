import { IsoagentError } from '../errors.ts'
import { WorkspacePath } from '../workspace/workspace-path.ts'

/** Longest object key (S3's and R2's), in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const ENCODED = /%(2e|2f|5c|00)/i
const encoder = new TextEncoder()

const utf8Length = (text: string) => encoder.encode(text).length

function invalid(what: string, value: string, reason: string): IsoagentError {
  return new IsoagentError('invalid_path', `invalid ${what} ${JSON.stringify(value)}: ${reason}`, {
    data: { path: value },
  })
}

/** Why `text` cannot be (part of) a key under the wall, or undefined when it can. */
function keyProblem(text: string): string | undefined {
  if (CONTROL.test(text)) return 'contains a NUL or control character'
  if (text.includes('\\')) return 'contains a backslash'
  if (ENCODED.test(text)) return 'contains a percent-encoded dot, separator or NUL'
  if (text.includes('//')) return 'contains an empty segment (//)'
  return undefined
}

/**
 * Normalise the `prefix` option: `''` (the whole bucket) or `segment/…/segment/` with exactly one
 * trailing slash. A leading `/`, empty, `.` or `..` segments and control characters are refused,
 * so the wall cannot start anywhere but where it says.
 */
export function normalisePrefix(prefix: string | undefined, store = 'S3'): string {
  const what = `${store} prefix`
  if (prefix === undefined || prefix === '') return ''
  if (typeof prefix !== 'string') throw invalid(what, String(prefix), 'not a string')
  if (prefix.startsWith('/')) throw invalid(what, prefix, 'must not start with /')
  const bare = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix
  const problem = keyProblem(bare) ?? (bare.endsWith('/') ? 'ends with //' : undefined)
  if (problem !== undefined) throw invalid(what, prefix, problem)
  for (const segment of bare.split('/')) {
    if (segment === '.' || segment === '..')
      throw invalid(what, prefix, 'contains a . or .. segment')
  }
  if (utf8Length(bare) + 1 >= MAX_KEY_BYTES)
    throw invalid(what, prefix, `longer than ${MAX_KEY_BYTES - 2} bytes`)
  return bare + '/'
}

/**
 * Maps workspace paths to object keys under one prefix: `key = prefix + path` (S3 and R2 alike,
 * both with keys of at most 1024 bytes). Paths arrive normalised ({@link WorkspacePath}), and each
 * key is checked again anyway: a key that would leave the prefix, contain `..`, `//`, a leading
 * `/` or control characters, or exceed 1024 bytes is refused (`path_escape` / `invalid_path`) before any request is made.
 */
export class KeySpace {
  /** `store` names the backend in messages (`S3`, `R2`). */
  constructor(
    readonly prefix: string,
    readonly store = 'S3',
  ) {}

  /** The object key of the file at `path` (never the root). */
  file(path: WorkspacePath): string {
    if (path === '')
      throw new IsoagentError('is_directory', 'the workspace root is a directory', {
        data: { path },
      })
    return this.check(path, '')
  }

  /** The key prefix of the directory at `path`: its children's keys start with it. */
  dir(path: WorkspacePath): string {
    return path === '' ? this.prefix : this.check(path, '/')
  }

  /** True when `key` lies under the prefix (the wall). */
  contains(key: string | undefined): key is string {
    return typeof key === 'string' && key.startsWith(this.prefix) && key.length > 0
  }

  /** `key` with the prefix of the directory `base` removed, or undefined if outside it. */
  relative(key: string | undefined, base: string): string | undefined {
    if (!this.contains(key) || !key.startsWith(base)) return undefined
    return key.slice(base.length)
  }

  /** A key for `path` + `suffix`, checked against every way out of the prefix. */
  check(path: string, suffix: string): string {
    if (typeof path !== 'string') throw invalid('path', String(path), 'not a string')
    if (path.startsWith('/'))
      throw new IsoagentError('path_escape', `path ${JSON.stringify(path)} is absolute`, {
        data: { path },
      })
    const problem = keyProblem(path) ?? (path.endsWith('/') ? 'ends with /' : undefined)
    if (problem !== undefined) throw invalid('path', path, problem)
    for (const segment of path.split('/')) {
      if (segment === '..')
        throw new IsoagentError('path_escape', `path ${JSON.stringify(path)} escapes the prefix`, {
          data: { path },
        })
      if (segment === '.' || segment === '') throw invalid('path', path, 'is not normalised')
    }
    const key = this.prefix + path + suffix
    if (utf8Length(key) > MAX_KEY_BYTES)
      throw invalid(
        'path',
        path,
        `its ${this.store} key would be longer than ${MAX_KEY_BYTES} bytes`,
      )
    if (!key.startsWith(this.prefix) || key.length <= this.prefix.length)
      throw new IsoagentError('path_escape', `path ${JSON.stringify(path)} leaves the prefix`, {
        data: { path },
      })
    return key
  }
}

/**
 * True when `name` (one listed entry, the part of a key between two `/`) is a name the workspace
 * can address: anything {@link WorkspacePath.parse} would change or refuse (`.`, `..`, control
 * characters, backslashes, over 255 bytes) is not listed, since no tool could open it.
 */
export function isListableName(name: string): boolean {
  if (name === '' || name.includes('/')) return false
  try {
    return WorkspacePath.parse(name) === name
  } catch {
    return false
  }
}

/** Order of two strings by code point: S3's listing order (UTF-8 bytes). */
export function compareKeys(a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(j)!
    if (x !== y) return x < y ? -1 : 1
    i += x > 0xffff ? 2 : 1
    j += y > 0xffff ? 2 : 1
  }
  const restA = a.length - i
  const restB = b.length - j
  return restA === restB ? 0 : restA < restB ? -1 : 1
}
