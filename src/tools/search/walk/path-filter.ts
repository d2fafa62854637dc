import picomatch from 'picomatch'
import { IsoagentError } from '../../../errors.ts'

/** Characters no glob syntax gives a meaning to. */
const PLAIN = /^[A-Za-z0-9._-]+$/

/**
 * For a name glob that is a plain name (`package.json`) or `*` and a plain suffix (`*.d.ts`):
 * the test of a path's last segment as string comparisons, which give what `re` (the glob's
 * expression) gives without slicing the name out or running the expression per path. Undefined
 * for any other glob.
 */
function plainNameTest(glob: string, re: RegExp): ((path: string) => boolean) | undefined {
  const tail = glob.startsWith('*') ? glob.slice(1) : undefined
  if (!PLAIN.test(tail ?? glob)) return undefined
  if (tail === undefined) {
    const slashed = `/${glob}`
    return (path) => path === glob || path.endsWith(slashed)
  }
  // Whether `*` may match nothing (the name is the suffix alone), as the expression says.
  const bare = re.test(tail)
  return (path) => {
    if (!path.endsWith(tail)) return false
    const rest = path.length - tail.length
    if (rest > 0 && path.lastIndexOf('/', rest - 1) !== rest - 1) return true
    return bare
  }
}

/**
 * `glob` in picomatch's syntax: a class opened with `[!` (the negation of gitignore and ripgrep
 * globs, which picomatch takes as a literal `!`) is written `[^`. Throws `invalid_argument` for
 * a class or brace set left open, which ripgrep refuses too.
 */
function picomatchSyntax(glob: string, what: string): string {
  const refuse = (why: string) =>
    new IsoagentError('invalid_argument', `${what} is not a valid glob: ${why}`, {
      data: { glob },
    })
  let out = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '\\') {
      out += glob.slice(i, i + 2)
      i++
      continue
    }
    if (c === '{') braces++
    else if (c === '}' && braces > 0) braces--
    if (c !== '[') {
      out += c
      continue
    }
    // A class: through its closing `]` (one right after the opening is a member).
    let j = i + 1
    const bang = glob[j] === '!'
    if (bang || glob[j] === '^') j++
    const body = j
    if (glob[j] === ']') j++
    while (j < glob.length && glob[j] !== ']') {
      if (glob[j] === '\\') j++
      else if (glob[j] === '[' && glob[j + 1] === ':') {
        const end = glob.indexOf(':]', j + 2)
        if (end !== -1) j = end + 1
      }
      j++
    }
    if (j >= glob.length) throw refuse(`unclosed character class at ${i}; write \\[ for a [`)
    out += (bang ? '[^' : glob.slice(i, body)) + glob.slice(body, j + 1)
    i = j
  }
  if (braces > 0) throw refuse('unclosed brace set; write \\{ for a {')
  return out
}

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
  const body = picomatchSyntax(negated ? glob.slice(1) : glob, what)
  if (body.length === 0) throw new IsoagentError('invalid_argument', `${what} is an empty glob`)
  const dirOnly = body.length > 1 && body.endsWith('/')
  const trimmed = dirOnly ? body.replace(/\/+$/, '') : body
  const pattern = trimmed.replace(/^\/+/, '')
  // `**/name` (a name without `/`) matches what `name` matches, at any depth; not a name that
  // starts with `!`, which alone would be picomatch's negation.
  const named =
    pattern.startsWith('**/') && !pattern.includes('/', 3) && pattern[3] !== '!'
      ? pattern.slice(3)
      : undefined
  const onName = named !== undefined || !trimmed.includes('/')
  let match: (path: string) => boolean
  try {
    // What picomatch's matcher does, without its per-call option handling: the glob's own text
    // matches, else its expression must (on the last segment, for a name glob).
    const re = picomatch.makeRe(named ?? pattern, { dot: true })
    const name = onName ? plainNameTest(named ?? pattern, re) : undefined
    match = name
      ? (path) => path === pattern || name(path)
      : onName
        ? (path) => path === pattern || re.test(path.slice(path.lastIndexOf('/') + 1))
        : (path) => path === pattern || re.test(path)
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

/**
 * For a glob that a file must match: a test telling whether a directory can hold any match, so
 * a walk need not enter it. A matching path's leading segments match the pattern's leading
 * segments one by one (up to the first `**`), and without a `**` no match lies deeper than the
 * pattern. Returns undefined when the glob gives no such bound (no `/`, negated, or a `/`
 * inside braces, parentheses or a class).
 */
export function directoryPruner(glob: string): ((dir: string) => boolean) | undefined {
  if (glob.startsWith('!') || glob.startsWith('./') || glob.includes('\\')) return undefined
  let body: string
  try {
    body = picomatchSyntax(glob, 'glob')
  } catch {
    return undefined
  }
  body = body.replace(/^\/+/, '').replace(/\/+$/, '')
  if (!body.includes('/')) return undefined
  let depth = 0
  for (const c of body) {
    if (c === '{' || c === '(' || c === '[') depth++
    else if (c === '}' || c === ')' || c === ']') depth = Math.max(0, depth - 1)
    else if (c === '/' && depth > 0) return undefined
  }
  const segments = body.split('/')
  const globstar = segments.findIndex((s) => s.includes('**'))
  // Directory segments that every match has in fixed positions: those before a `**`, and never
  // the last one (the file's own name).
  const fixed = segments.slice(0, globstar === -1 ? segments.length - 1 : globstar)
  let tests: ((name: string) => boolean)[]
  try {
    tests = fixed.map((s) => picomatch(s, { dot: true }))
  } catch {
    return undefined
  }
  const maxDepth = globstar === -1 ? segments.length - 1 : Number.POSITIVE_INFINITY
  return (dir) => {
    if (dir === '') return true
    const names = dir.split('/')
    if (names.length > maxDepth) return false
    for (let i = 0; i < Math.min(names.length, tests.length); i++)
      if (!tests[i]!(names[i]!)) return false
    return true
  }
}

/** The pruners of several globs a file must all match, as one (undefined when none prunes). */
export function prunerFor(
  ...globs: (string | undefined)[]
): ((dir: string) => boolean) | undefined {
  const tests = globs.flatMap((g) => {
    const t = g === undefined ? undefined : directoryPruner(g)
    return t === undefined ? [] : [t]
  })
  if (tests.length === 0) return undefined
  return (dir) => tests.every((t) => t(dir))
}
