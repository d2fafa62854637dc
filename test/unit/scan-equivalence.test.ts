import { describe, expect, it } from 'vitest'
import { seededTexts, type Piece } from '../helpers/seeded-texts.ts'
import { memoryWorkspace, WorkspacePath } from '../../adapters/index.ts'
import { compileLineMatcher } from '../../src/tools/search/line-matcher.ts'
import { scanFile, type ScanRequest } from '../../src/tools/search/scan-file.ts'

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
