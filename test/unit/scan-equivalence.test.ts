import { describe, expect, it } from 'vitest'
import { seededTexts, type Piece } from '../helpers/seeded-texts.ts'
import { memoryWorkspace, WorkspacePath } from '../../adapters/index.ts'
import { compileLineMatcher } from '../../src/tools/search/scan/line-matcher.ts'
import { scanFile, scanFileSoon } from '../../src/tools/search/scan/scan-file.ts'
import type { ScanRequest } from '../../src/tools/search/scan/scan-request.ts'

const PIECES: Piece[] = [
  'needle',
  'Needle',
  'NEEDLE',
  'fn fooHandler',
  'fn  Handler',
  'handler',
  'other text',
  '缓存',
  '\u212Aey',
  ' ',
  '\n',
  '\n',
  '\n',
  '\r\n',
  [0xc3],
  [0xff],
]
const files = (seed: number, count: number) =>
  seededTexts(seed, count, PIECES, { maxPieces: 60, bomOneIn: 6 })

/** The byte-level scans (prefilter) must give exactly what the decoding scan gives. */
describe('scanFile with and without the byte prefilter', () => {
  const patterns: [string, boolean][] = [
    ['needle', true],
    ['needle', false],
    ['key', false],
    ['fn\\s+\\w*Handler', true],
    ['Handler$', true],
    ['^needle', false],
  ]
  for (const [pattern, caseSensitive] of patterns) {
    it(`agrees for /${pattern}/${caseSensitive ? '' : 'i'} in every mode`, async () => {
      const fast = compileLineMatcher(pattern, caseSensitive)
      expect(fast.prefilter).toBeDefined()
      const slow = { ...fast, prefilter: undefined }
      let n = 0
      for (const bytes of files(pattern.length * 31 + (caseSensitive ? 7 : 9), 300)) {
        const ws = memoryWorkspace({ f: bytes })
        const path = WorkspacePath.parse('f')
        const variant = n++
        const request: Omit<ScanRequest, 'matcher'> = {
          keepText: variant % 3 !== 0,
          firstOnly: variant % 7 === 0,
          context: variant % 4,
          afterLine: variant % 5 === 0 ? 3 : 0,
          shownThrough: variant % 5 === 0 ? 4 : 0,
          maxMatches: variant % 2 === 0 ? Number.POSITIVE_INFINITY : 1 + (variant % 3),
        }
        if (request.firstOnly) request.keepText = false
        if (!request.keepText) {
          request.context = 0
          request.afterLine = 0
          request.shownThrough = 0
          request.maxMatches = Number.POSITIVE_INFINITY
        }
        const a = await scanFile(ws, path, { ...request, matcher: fast })
        const b = await scanFile(ws, path, { ...request, matcher: slow })
        expect(
          a,
          `${JSON.stringify(new TextDecoder().decode(bytes))} ${JSON.stringify(request)}`,
        ).toEqual(b)
      }
    })
  }
})

/**
 * A file over the first read is scanned whole from one read at once where the workspace reads
 * at once (and a prefilter allows), else streamed in chunks and blocks: the results are equal.
 */
describe('files over the first read, scanned whole at once or streamed', () => {
  const MiB = 1024 * 1024
  /** `size` bytes of generated text (many seeded texts, cut at `size`). */
  const big = (seed: number, size: number) => {
    const out = new Uint8Array(size)
    let at = 0
    for (let round = 0; at < size; round++)
      for (const text of seededTexts(seed + round, 400, PIECES, { maxPieces: 60, bomOneIn: 6 })) {
        out.set(text.subarray(0, size - at), at)
        at += Math.min(text.length, size - at)
        if (at === size) break
      }
    return out
  }
  const sizes = [MiB, MiB + 777, 2.5 * MiB, 12 * MiB, 12 * MiB + 1]
  const patterns: [string, boolean][] = [
    ['needle', true],
    ['needle', false],
    ['key', false],
    ['fn\\s+\\w*Handler', true],
  ]
  const requests: Omit<ScanRequest, 'matcher'>[] = [
    { keepText: true, firstOnly: false, context: 2, afterLine: 0, shownThrough: 0, maxMatches: 40 },
    {
      keepText: false,
      firstOnly: false,
      context: 0,
      afterLine: 0,
      shownThrough: 0,
      maxMatches: Number.POSITIVE_INFINITY,
    },
    {
      keepText: false,
      firstOnly: true,
      context: 0,
      afterLine: 0,
      shownThrough: 0,
      maxMatches: Number.POSITIVE_INFINITY,
    },
  ]
  for (const size of sizes)
    it(`agrees for a file of ${size} bytes`, async () => {
      const bytes = big(size, size)
      const memory = memoryWorkspace({ f: bytes })
      /** Reads that wait, by the scan at once. */
      let waited = 0
      const now: typeof memory = {
        ...memory,
        read: (...args) => (waited++, memory.read(...args)),
        readStream: (...args) => (waited++, memory.readStream(...args)),
      }
      const { readNow: _readNow, ...streamed } = memoryWorkspace({ f: bytes })
      const path = WorkspacePath.parse('f')
      for (const [pattern, caseSensitive] of patterns)
        for (const request of requests) {
          const matcher = compileLineMatcher(pattern, caseSensitive)
          waited = 0
          const a = await scanFileSoon(now, path, { ...request, matcher })
          // A literal the bytes decide, in a file up to 12 MiB, is scanned from one read at
          // once (files_with_matches: from the first read where it finds one); `key` is not
          // (its text holds K signs).
          if (pattern === 'needle')
            expect(waited > 0, `/${pattern}/ ${JSON.stringify(request)}`).toBe(
              size > 12 * MiB && !request.firstOnly,
            )
          const b = await scanFile(streamed, path, { ...request, matcher })
          expect(a, `/${pattern}/ ${JSON.stringify(request)}`).toEqual(b)
          if (request.keepText) expect(a.records.length, pattern).toBeGreaterThan(0)
        }
    }, 60_000)
})
