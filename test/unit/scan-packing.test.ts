import { describe, expect, it } from 'vitest'
import {
  packOutcomes,
  packTree,
  unpackOutcomes,
  unpackTree,
} from '../../adapters/node-fs/scan-packing.ts'
import type {
  FileScanOutcome,
  ScanResult,
  TreeScanOutcome,
} from '../../src/workspace/file-scanner.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'

const counted = (matches: number, binary = false): ScanResult => ({
  binary,
  matches,
  records: [],
  lastMatchLine: 0,
  shownThrough: 0,
  more: false,
})
const plain = (matches: number, binary = false): FileScanOutcome => ({
  result: counted(matches, binary),
})

const OUTCOMES: FileScanOutcome[] = [
  plain(0),
  plain(7),
  plain(0, true),
  { result: { ...counted(0), lineTooLong: true } },
  {
    result: {
      binary: false,
      matches: 2,
      records: [
        { line: 3, text: 'a needle', match: true },
        { line: 4, text: 'context', match: false },
        { line: 9, text: 'needle again', match: true },
      ],
      lastMatchLine: 9,
      shownThrough: 9,
      more: true,
    },
  },
  { result: { ...counted(1), shownThrough: 12 } },
  { error: { code: 'not_found', message: 'x.txt vanished', data: { path: 'x.txt' } } },
  plain(2 ** 31 - 1),
]

describe('scan outcomes packed for the trip between threads', () => {
  it('come back exactly as they were', () => {
    const packed = packOutcomes(OUTCOMES)
    expect(structuredClone(unpackOutcomes(structuredClone(packed)))).toStrictEqual(OUTCOMES)
    // Plain counts travel as numbers; only the rest as objects.
    expect(packed.other.map(([i]) => i)).toEqual([4, 5, 6])
  })

  it('keep every directory of a tree with its files, skips and resume point', () => {
    const files = OUTCOMES.map((outcome, i) => ({ path: `d/f${i}` as WorkspacePath, outcome }))
    const tree: TreeScanOutcome[] = [
      { files: files.slice(0, 3), skips: { unreadable_dirs: 1, unreadable_ignore_files: 0 } },
      { files: [], skips: { unreadable_dirs: 0, unreadable_ignore_files: 2 } },
      {
        files: files.slice(3),
        skips: { unreadable_dirs: 0, unreadable_ignore_files: 0 },
        resumeAfter: 'd/f7' as WorkspacePath,
      },
    ]
    expect(unpackTree(structuredClone(packTree(tree)))).toStrictEqual(tree)
  })
})
