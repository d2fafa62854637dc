import picomatch from 'picomatch'
import { IsoagentError } from '../../errors.ts'

/**
 * A glob over workspace paths with ripgrep's `-g` semantics: picomatch syntax (brace sets,
 * extglobs, `**`); a pattern without `/` matches the file name at any depth; a leading `!`
 * negates.
 */
export function compilePathGlob(glob: string, what: string): (path: string) => boolean {
  const negated = glob.startsWith('!')
  const body = negated ? glob.slice(1) : glob
  if (body.length === 0) throw new IsoagentError('invalid_argument', `${what} is an empty glob`)
  let match: (path: string) => boolean
  try {
    match = picomatch(body.replace(/^\/+/, ''), { dot: true, basename: !body.includes('/') })
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `${what} is not a valid glob: ${(cause as Error).message}`,
      { cause },
    )
  }
  return negated ? (path) => !match(path) : match
}
