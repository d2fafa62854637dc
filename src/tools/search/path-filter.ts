import picomatch from 'picomatch'
import { IsoagentError } from '../../errors.ts'

/**
 * A glob over workspace paths with ripgrep's `-g` semantics: picomatch syntax (brace sets,
 * extglobs, `**`); a pattern without `/` matches the file name at any depth; a leading `!`
 * negates. Like ripgrep, which matches globs against directories as it walks, a negated glob
 * that names a directory (`!vendor`, `!build/`) leaves out everything under it; a trailing `/`
 * makes a glob match directories only. The directory a search starts in (`start`, and those
 * above it) is given, not walked: ripgrep never filters it, and neither does this.
 */
export function compilePathGlob(glob: string, what: string, start = ''): (path: string) => boolean {
  const negated = glob.startsWith('!')
  const body = negated ? glob.slice(1) : glob
  if (body.length === 0) throw new IsoagentError('invalid_argument', `${what} is an empty glob`)
  const dirOnly = body.length > 1 && body.endsWith('/')
  const trimmed = dirOnly ? body.replace(/\/+$/, '') : body
  let match: (path: string) => boolean
  try {
    match = picomatch(trimmed.replace(/^\/+/, ''), { dot: true, basename: !trimmed.includes('/') })
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `${what} is not a valid glob: ${(cause as Error).message}`,
      { cause },
    )
  }
  const file = dirOnly ? () => false : match
  if (!negated) return file
  const underMatchingDir = (path: string) => {
    const from = start === '' ? 0 : start.length + 1
    for (let at = path.indexOf('/', from); at !== -1; at = path.indexOf('/', at + 1))
      if (match(path.slice(0, at))) return true
    return false
  }
  return (path) => !file(path) && !underMatchingDir(path)
}
