import type { RE2JS } from 're2js'
import { IsoagentError } from '../../../errors.ts'
import type { ByteIndex } from '../../../workspace/workspace-services.ts'
import {
  byteFinder,
  byteNeedle,
  TYPED_ARRAY_INDEX,
  type ByteFinder,
  type ByteNeedle,
} from '../bytes/byte-search.ts'

/** Finds the lines of a text that match a pattern, never across line ends. */
export interface LineMatcher {
  /** Engine serving the pattern: V8's backtracking RegExp, or a linear-time RE2 for risky patterns. */
  engine: 'regexp' | 're2'
  /**
   * Offsets (into `text`) of the starts of lines that match, in order; `text` holds whole
   * lines separated by `\n`.
   */
  matchingLineStarts(text: string, onLine: (lineStart: number, lineEnd: number) => boolean): void
  /** Whether one line (without its line end) matches. */
  test(line: string): boolean
  /** A literal every matching line contains, to look for in the raw bytes before decoding. */
  prefilter?: BytePrefilter
  /** How the scans with this matcher find byte values (the workspace's way). */
  byteIndex: ByteIndex
}

/** See {@link LineMatcher.prefilter}. */
export interface BytePrefilter {
  needle: ByteNeedle
  find: ByteFinder
  /** The pattern is exactly this literal: counting lines with it in the bytes is the answer. */
  exact: boolean
  /** Finders of the pattern's other required literals: a line without one of them cannot match. */
  others: ByteFinder[]
  /** Some needle is case-insensitive with `k` or `s` (see {@link ByteNeedle.foldsNonAscii}). */
  foldsNonAscii: boolean
  /**
   * Whether a line matches can be told from that line alone (no lookaround, which in a block of
   * lines may see across a line end), so only lines holding the literal need decoding.
   */
  lineLocal: boolean
}

function prefilterFor(
  literals: string[],
  caseInsensitive: boolean,
  exact: boolean,
  pattern: string,
  index: ByteIndex,
): BytePrefilter | undefined {
  const needles = [...literals]
    .sort((a, b) => b.length - a.length)
    .map((l) => byteNeedle(l, caseInsensitive))
    .filter((n) => n !== undefined)
  const needle = needles[0]
  if (needle === undefined) return undefined
  return {
    needle,
    find: byteFinder(needle, index),
    others: needles.slice(1).map((n) => byteFinder(n, index)),
    foldsNonAscii: needles.some((n) => n.foldsNonAscii),
    exact,
    lineLocal: !/\(\?<?[=!]/.test(pattern),
  }
}

const META = /[\\^$.*+?()[\]{}|]/

/**
 * Whether a quantified group contains another quantifier or an alternation (star height > 1 or
 * a repeated alternation), the shapes that make a backtracking engine take exponential time.
 */
function isRisky(pattern: string): boolean {
  const stack: { inner: boolean }[] = [{ inner: false }]
  let i = 0
  let lastGroupInner = false
  let lastWasGroup = false
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === '\\') {
      i += 2
      lastWasGroup = false
      continue
    }
    if (c === '[') {
      i++
      if (pattern[i] === '^') i++
      if (pattern[i] === ']') i++
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
      i++
      lastWasGroup = false
      continue
    }
    if (c === '(') {
      stack.push({ inner: false })
      i++
      lastWasGroup = false
      continue
    }
    if (c === ')') {
      const group = stack.pop() ?? { inner: false }
      lastGroupInner = group.inner
      lastWasGroup = true
      i++
      continue
    }
    if (c === '|') stack[stack.length - 1]!.inner = true
    const unbounded =
      c === '*' ||
      c === '+' ||
      (c === '{' &&
        /^\{\d*,\d*\}/.test(pattern.slice(i)) &&
        !/^\{\d*,[01]\}/.test(pattern.slice(i)))
    if (unbounded || c === '?') {
      if (unbounded && lastWasGroup && lastGroupInner) return true
      stack[stack.length - 1]!.inner = true
    }
    lastWasGroup = false
    i++
  }
  return false
}

/** The RE2 engine, once {@link lineMatcherReady} has loaded it for a risky pattern. */
let re2: typeof RE2JS | undefined

/**
 * Load what {@link compileLineMatcher} needs for `pattern`: the RE2 engine when the pattern is
 * risky (it is loaded once, at the first such pattern, not with this module). Await it before
 * compiling a pattern that may be risky.
 */
export async function lineMatcherReady(pattern: string): Promise<void> {
  if (re2 === undefined && isRisky(pattern)) re2 = (await import('re2js')).RE2JS
}

/**
 * Compile a search pattern. JavaScript regular expression syntax with Unicode (`u` flag);
 * patterns whose shape risks catastrophic backtracking run on a linear-time RE2 engine instead
 * (refused if RE2 cannot express them). Invalid patterns throw `invalid_argument` with the
 * engine's message. Literals are found in bytes by `byteIndex` (the workspace's). A risky
 * pattern needs {@link lineMatcherReady} awaited first.
 */
export function compileLineMatcher(
  pattern: string,
  caseSensitive: boolean,
  byteIndex: ByteIndex = TYPED_ARRAY_INDEX,
): LineMatcher {
  if (pattern.includes('\n') || pattern.includes('\r')) {
    throw new IsoagentError(
      'invalid_argument',
      'the pattern contains a line break; grep matches within single lines',
    )
  }
  let regexp: RegExp
  const flags = caseSensitive ? 'gmu' : 'gimu'
  try {
    regexp = new RegExp(pattern, flags)
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `invalid regular expression /${pattern}/: ${invalidBecause(cause as Error, pattern, flags)}`,
      { cause },
    )
  }
  if (!META.test(pattern) && caseSensitive) return literalMatcher(pattern, byteIndex)
  const plain = !META.test(pattern)
  const prefilter = prefilterFor(
    plain ? [pattern] : requiredLiterals(pattern),
    !caseSensitive,
    plain,
    pattern,
    byteIndex,
  )
  if (isRisky(pattern)) return { ...re2Matcher(pattern, caseSensitive), prefilter, byteIndex }
  const single = new RegExp(pattern, caseSensitive ? 'u' : 'iu')
  return {
    engine: 'regexp',
    prefilter,
    byteIndex,
    test: (line) => single.test(line),
    matchingLineStarts(text, onLine) {
      regexp.lastIndex = 0
      let from = 0
      for (;;) {
        regexp.lastIndex = from
        const m = regexp.exec(text)
        if (m === null) return
        // An empty match after the final line end (`^`, `^$`, `x*`) is on no line.
        if (m.index === text.length && text.endsWith('\n')) return
        // (lastIndexOf clamps a start of -1 to 0, where it finds a leading empty line's \n.)
        const lineStart = m.index === 0 ? 0 : text.lastIndexOf('\n', m.index - 1) + 1
        let lineEnd = text.indexOf('\n', m.index)
        if (lineEnd === -1) lineEnd = text.length
        // In multiline mode `^` also matches after a `\r`, so between the `\r` and `\n` of a CRLF
        // line end it finds an empty line that is not there (`^$` would match every CRLF line).
        const afterCr = m.index === lineEnd && m.index > lineStart && text[m.index - 1] === '\r'
        // A match that runs across a line end (\s, [^x]) says nothing about its first line alone.
        const within =
          (!afterCr && m.index + m[0].length <= lineEnd) ||
          single.test(text.slice(lineStart, lineEnd))
        if (within && !onLine(lineStart, lineEnd)) return
        if (lineEnd >= text.length) return
        from = lineEnd + 1
      }
    },
  }
}

/** Why the engine refused `pattern`: its message without its own preamble (V8's names the flags). */
function invalidBecause(error: Error, pattern: string, flags: string): string {
  const own = `Invalid regular expression: /${pattern}/${flags}: `
  if (error.message.startsWith(own)) return error.message.slice(own.length)
  return error.message.replace(/^invalid regular expression:\s*/i, '')
}

function literalMatcher(literal: string, byteIndex: ByteIndex): LineMatcher {
  return {
    engine: 'regexp',
    prefilter: prefilterFor([literal], false, true, literal, byteIndex),
    byteIndex,
    test: (line) => line.includes(literal),
    matchingLineStarts(text, onLine) {
      if (literal === '') {
        for (let start = 0; start <= text.length;) {
          let end = text.indexOf('\n', start)
          if (end === -1) end = text.length
          if (!onLine(start, end) || end >= text.length) return
          start = end + 1
        }
        return
      }
      let at = text.indexOf(literal)
      while (at !== -1) {
        const lineStart = text.lastIndexOf('\n', at - 1) + 1
        let lineEnd = text.indexOf('\n', at)
        if (lineEnd === -1) lineEnd = text.length
        if (!onLine(lineStart, lineEnd) || lineEnd >= text.length) return
        at = text.indexOf(literal, lineEnd + 1)
      }
    },
  }
}

function re2Matcher(pattern: string, caseSensitive: boolean): Omit<LineMatcher, 'byteIndex'> {
  const RE2 = re2
  if (RE2 === undefined)
    throw new Error(`RE2 is not loaded: await lineMatcherReady() before compiling /${pattern}/`)
  let re: RE2JS
  try {
    re = RE2.compile(pattern, caseSensitive ? 0 : RE2.CASE_INSENSITIVE)
  } catch (cause) {
    throw new IsoagentError(
      'invalid_argument',
      `the pattern nests repetition, which can take exponential time with backtracking, and the linear-time engine cannot run it (${(cause as Error).message}); simplify the pattern`,
      { cause },
    )
  }
  const test = (line: string) => re.matcher(line).find()
  return {
    engine: 're2',
    test,
    matchingLineStarts(text, onLine) {
      // Lines start after each line end, but no line starts after the final one.
      for (let start = 0; start < text.length || start === 0;) {
        let end = text.indexOf('\n', start)
        if (end === -1) end = text.length
        // As with the RegExp engine's multiline `$`, a CRLF line also matches without its `\r`.
        const line = text.slice(start, end)
        const matches = test(line) || (line.endsWith('\r') && test(line.slice(0, -1)))
        if (matches && !onLine(start, end)) return
        if (end >= text.length) return
        start = end + 1
      }
    },
  }
}

/**
 * Literals every match of `pattern` must contain (in any order), or none when that cannot be
 * told safely. Conservative: a top-level alternation, and anything inside groups and classes,
 * give nothing; a quantifier that allows zero repeats drops the atom before it.
 */
export function requiredLiterals(pattern: string): string[] {
  const runs: string[] = []
  let run = ''
  let lastAtomStart = -1 // index in `run` of the last literal atom, or -1 when the last atom was not one
  const end = () => {
    if (run.length > 0) runs.push(run)
    run = ''
    lastAtomStart = -1
  }
  let i = 0
  let depth = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (depth > 0) {
      if (c === '\\') i += 2
      else if (c === '[') i = skipClass(pattern, i)
      else {
        if (c === '(') depth++
        else if (c === ')') depth--
        i++
      }
      continue
    }
    if (c === '|') return []
    if (c === '(') {
      end()
      depth = 1
      i++
      continue
    }
    if (c === '[') {
      end()
      i = skipClass(pattern, i)
      continue
    }
    if (
      c === '*' ||
      c === '?' ||
      (c === '{' && /^\{0*,?\d*\}/.test(pattern.slice(i)) && /^\{0/.test(pattern.slice(i)))
    ) {
      // Zero repeats allowed: the atom before is not required.
      if (lastAtomStart >= 0) run = run.slice(0, lastAtomStart)
      end()
      i = c === '{' ? pattern.indexOf('}', i) + 1 : i + 1
      if (pattern[i] === '?') i++
      continue
    }
    if (c === '+' || c === '{') {
      // At least one repeat: the atom stays, but nothing after it is adjacent for sure.
      const close = c === '{' ? pattern.indexOf('}', i) : i
      end()
      i = close + 1
      if (pattern[i] === '?') i++
      continue
    }
    if (c === '\\') {
      const next = pattern[i + 1]
      if (next !== undefined && '^$\\.*+?()[]{}|/'.includes(next)) {
        lastAtomStart = run.length
        run += next
        i += 2
        continue
      }
      end()
      // \p{…}, \P{…}, \u{…}, \k<…>: skip their argument; other escapes are one character.
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 2] === '{')
        i = pattern.indexOf('}', i) + 1
      else if (next === 'k' && pattern[i + 2] === '<') i = pattern.indexOf('>', i) + 1
      else i += 2
      continue
    }
    if (c === '^' || c === '$' || c === '.') {
      end()
      i++
      continue
    }
    const cp = pattern.codePointAt(i)!
    const ch = String.fromCodePoint(cp)
    lastAtomStart = run.length
    run += ch
    i += ch.length
  }
  end()
  return runs
}

function skipClass(pattern: string, i: number): number {
  i++
  if (pattern[i] === '^') i++
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1
  return i + 1
}
