import { describe, expect, it } from 'vitest'
import { seededTexts, type Piece } from '../helpers/seeded-texts.ts'
import { compileLineMatcher, requiredLiterals } from '../../src/tools/search/scan/line-matcher.ts'
import {
  anchorFinder,
  byteNeedle,
  countLineEnds,
  countLinesWith,
  hasFoldingSigns,
  horspoolFinder,
  indexOfByte,
} from '../../src/tools/search/bytes/byte-search.ts'
import type { ByteIndex } from '../../src/workspace/workspace-services.ts'

const encoder = new TextEncoder()

/** Lines of `bytes` (decoded as the search decodes them) that `pattern` matches. */
function decodedCount(bytes: Uint8Array, pattern: string, caseSensitive: boolean): number {
  const re = new RegExp(pattern, caseSensitive ? 'u' : 'iu')
  const text = new TextDecoder().decode(bytes)
  return text.split('\n').filter((line) => re.test(line) || re.test(line.replace(/\r$/, ''))).length
}

/** Pieces of awkward texts: Kelvin and long-s signs, invalid UTF-8, CRLF. */
const PIECES: Piece[] = [
  'request',
  'Request',
  'REQUESTID',
  'requestId',
  'handler',
  'HANDLER',
  'Handler',
  'fn  fooHandler',
  'fn barhandler',
  '\u212Aey',
  'key',
  'KEY',
  'cla\u017F\u017F',
  'class',
  'CLASS',
  '缓存',
  'é',
  ' ',
  '\n',
  '\r\n',
  'x',
  [0xc3], // truncated sequence
  [0xe2, 0x28], // invalid continuation
  [0xff],
  [0xc5], // lead byte of ſ alone
  [0xe2, 0x84], // two bytes of K
]
const texts = (seed: number, count: number) =>
  seededTexts(seed, count, PIECES, { maxPieces: 40, bomOneIn: 5 })

describe('byte prefilter', () => {
  const cases: [string, boolean][] = [
    ['requestId', true],
    ['request', false],
    ['handler', false],
    ['key', false],
    ['class', false],
    ['KEY', false],
    ['缓存', true],
    ['fn\\s+\\w+Handler', true],
    ['fn\\s+\\w+handler', false],
    ['Requ?est', true],
    ['cla(ss|ſſ)', false],
    ['x*key', false],
    ['fn\\s+\\w+Handler', false],
    ['class\\s+\\w+Key', true],
    ['req.*Id', true],
  ]
  for (const [pattern, caseSensitive] of cases) {
    it(`agrees with decoding for /${pattern}/${caseSensitive ? '' : 'i'}`, () => {
      const matcher = compileLineMatcher(pattern, caseSensitive)
      const pre = matcher.prefilter
      let checked = 0
      for (const bytes of texts(pattern.length * 7919 + (caseSensitive ? 1 : 2), 400)) {
        const expected = decodedCount(bytes, pattern, caseSensitive)
        if (pre === undefined) continue
        if (pre.foldsNonAscii && hasFoldingSigns(bytes)) continue
        checked++
        // Never a false negative: a file with a matching line contains the needle.
        if (expected > 0) expect(pre.find(bytes, 0)).not.toBe(-1)
        if (pre.exact)
          expect(countLinesWith(pre.find, bytes, Number.POSITIVE_INFINITY)).toBe(expected)
        // Every matching line holds each required literal.
        const re = new RegExp(pattern, caseSensitive ? 'u' : 'iu')
        for (const line of new TextDecoder().decode(bytes).split('\n')) {
          const lineBytes = encoder.encode(line)
          if (re.test(line) || re.test(line.replace(/\r$/, ''))) {
            if (!line.includes('\uFFFD') && !line.includes('\uFEFF'))
              for (const f of [pre.find, ...pre.others]) expect(f(lineBytes, 0)).not.toBe(-1)
          }
        }
      }
      if (pre !== undefined) expect(checked).toBeGreaterThan(50)
    })
  }

  it('has exact prefilters for literals and required ones for regexes', () => {
    expect(compileLineMatcher('requestId', true).prefilter?.exact).toBe(true)
    expect(compileLineMatcher('handler', false).prefilter?.exact).toBe(true)
    expect(compileLineMatcher('fn\\s+\\w+Handler', true).prefilter?.exact).toBe(false)
    // Non-ASCII case-insensitive literals and alternations get none.
    expect(compileLineMatcher('缓存é', false).prefilter).toBeUndefined()
    expect(compileLineMatcher('a|b', true).prefilter).toBeUndefined()
  })

  it('tells Kelvin and long-s signs apart from their lookalike bytes', () => {
    expect(hasFoldingSigns(encoder.encode('\u212A'))).toBe(true)
    expect(hasFoldingSigns(encoder.encode('\u017F'))).toBe(true)
    expect(hasFoldingSigns(encoder.encode('\u2129 \u0180 k s'))).toBe(false)
  })
})

describe('byte finders', () => {
  /** Every offset where `needle` occurs in `text` (ASCII letters in either case when folding). */
  function naive(text: Uint8Array, needle: Uint8Array, fold: boolean): number[] {
    const eq = (a: number, b: number) =>
      a === b || (fold && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7a && (a | 0x20) === (b | 0x20))
    const out: number[] = []
    for (let i = 0; i + needle.length <= text.length; i++) {
      let k = 0
      while (k < needle.length && eq(text[i + k]!, needle[k]!)) k++
      if (k === needle.length) out.push(i)
    }
    return out
  }
  const all = (find: (t: Uint8Array, from: number) => number, text: Uint8Array) => {
    const out: number[] = []
    for (let at = find(text, 0); at !== -1; at = find(text, at + 1)) out.push(at)
    return out
  }
  const literals: [string, boolean][] = [
    ['requestId', false],
    ['request', true],
    ['eee', false],
    ['handler', true],
    ['key', true],
    ['ab', false],
    ['x', false],
    ['缓存', false],
    ['CLASS', true],
    ['Request Request', false],
    ['e\u00e9', false],
  ]
  // Byte searches by a typed array's indexOf (the default) and by Node's Buffer (memchr), as the
  // local workspace has them.
  const indexes: [string, ByteIndex][] = [
    ['Uint8Array', { indexOf: (b, v, f) => b.indexOf(v, f), nsPerByte: 0.3 }],
    ['Buffer', { indexOf: (b, v, f) => Buffer.prototype.indexOf.call(b, v, f), nsPerByte: 0.02 }],
  ]
  for (const [literal, fold] of literals)
    for (const [indexName, index] of indexes) {
      it(`anchor and Horspool find every ${JSON.stringify(literal)}${fold ? ' (folded)' : ''}, from every offset (${indexName} indexOf)`, () => {
        const needle = byteNeedle(literal, fold)!
        const pieces: Piece[] = [
          ...PIECES,
          'eeee',
          'ee',
          literal,
          literal.toUpperCase(),
          'ab',
          'aab',
        ]
        let found = 0
        for (const text of seededTexts(literal.length * 31 + (fold ? 1 : 0), 150, pieces, {
          maxPieces: 30,
          bomOneIn: 7,
        })) {
          const expected = naive(text, needle.bytes, fold)
          found += expected.length
          for (const strategy of [anchorFinder(needle, index), horspoolFinder(needle)]) {
            expect(all(strategy.find, text)).toEqual(expected)
            // From inside an occurrence: the next one, as the naive search finds it.
            for (const from of [1, 2, 5, text.length - 1, text.length])
              expect(strategy.find(text, from)).toBe(expected.find((at) => at >= from) ?? -1)
          }
        }
        expect(found).toBeGreaterThan(20)
        for (const text of seededTexts(7, 40, PIECES, { maxPieces: 30, bomOneIn: 9 }))
          for (const from of [0, 1, 9, text.length - 1, text.length])
            expect(indexOfByte(text, 0x0a, from, index)).toBe(text.indexOf(0x0a, from))
      })
    }
})

describe('countLineEnds', () => {
  it('counts every \\n in a range, at any alignment and length', () => {
    let seed = 3
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n
    // Bytes around the line end (0x0a) and its neighbours in the word test: 0x09, 0x0b, 0x8a.
    const alphabet = [0x0a, 0x0a, 0x09, 0x0b, 0x8a, 0x00, 0xff, 0x61, 0x7f, 0x80]
    const backing = new Uint8Array(300)
    for (let i = 0; i < backing.length; i++) backing[i] = alphabet[next(alphabet.length)]!
    for (let trial = 0; trial < 2000; trial++) {
      const offset = next(8)
      const bytes = backing.subarray(offset, offset + next(290))
      const from = next(bytes.length + 1)
      const to = from + next(bytes.length - from + 1)
      let expected = 0
      for (let i = from; i < to; i++) if (bytes[i] === 0x0a) expected++
      expect(countLineEnds(bytes, from, to)).toBe(expected)
    }
  })

  it('counts long runs exactly, however many line ends a stretch holds', () => {
    // Long enough for many folds of the per-lane sums; all line ends is the most a lane can get.
    const size = 70_000
    for (const fill of ['all', 'every other', 'none', 'sparse'] as const) {
      const backing = new Uint8Array(size + 8)
      for (let i = 0; i < backing.length; i++)
        backing[i] =
          fill === 'all' ||
          (fill === 'every other' && i % 2 === 0) ||
          (fill === 'sparse' && i % 997 === 0)
            ? 0x0a
            : 0x61
      for (const offset of [0, 1, 3, 5]) {
        const bytes = backing.subarray(offset, offset + size)
        for (const [from, to] of [
          [0, size],
          [7, size - 3],
          [1000, 9000],
          [4, 2036],
          [0, 2040],
        ]) {
          let expected = 0
          for (let i = from!; i < to!; i++) if (bytes[i] === 0x0a) expected++
          expect(countLineEnds(bytes, from!, to!), `${fill} ${offset} ${from}-${to}`).toBe(expected)
        }
      }
    }
  })
})

describe('requiredLiterals', () => {
  it('lists every literal run a match must hold', () => {
    expect(requiredLiterals('fn\\s+\\w+Handler')).toEqual(['fn', 'Handler'])
    expect(requiredLiterals('req.*Id')).toEqual(['req', 'Id'])
    expect(requiredLiterals('a|b')).toEqual([])
    expect(compileLineMatcher('fn\\s+\\w+Handler', true).prefilter?.others).toHaveLength(1)
  })
})

describe('the prefilter looks for the longest required literal', () => {
  const table: [string, string | undefined][] = [
    ['requestId', 'requestId'],
    ['fn\\s+\\w+Handler', 'Handler'],
    ['colou?r', 'colo'],
    ['ab+c', 'ab'],
    ['a{0,3}bcd', 'bcd'],
    ['x(abc)*yz', 'yz'],
    ['(foo|bar)baz', 'baz'],
    ['foo|bar', undefined],
    ['[abc]+', undefined],
    ['\\.env\\b', '.env'],
    ['\\p{L}+name', 'name'],
    ['a.b', 'a'],
    ['^import .* from', 'import '],
    ['[]]xy', undefined],
  ]
  for (const [pattern, literal] of table) {
    it(`/${pattern}/ looks for ${JSON.stringify(literal)}`, () => {
      let valid = true
      try {
        new RegExp(pattern, 'u')
      } catch {
        valid = false
      }
      const needle = valid ? compileLineMatcher(pattern, true).prefilter?.needle : undefined
      if (valid) expect(needle && new TextDecoder().decode(needle.bytes)).toBe(literal)
      else expect(() => compileLineMatcher(pattern, true)).toThrow()
    })
  }
})
