import { describe, expect, it } from 'vitest'
import {
  packOutcomes,
  packTree,
  unpackOutcomes,
  unpackTree,
} from '../../adapters/node/scan-packing.ts'
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

  it('send a run of quiet files as its last file and its length, and nothing else folded', () => {
    // q: no match, nothing else. Runs of them fold; every other outcome stays, in order.
    const q = plain(0)
    const kinds = ['q', 'q', 'q', 'm', 'q', 'b', 'q', 'q', 'e', 'q'] as const
    const outcome = (k: (typeof kinds)[number]): FileScanOutcome =>
      k === 'q' ? q : k === 'm' ? plain(3) : k === 'b' ? plain(0, true) : OUTCOMES[6]!
    const files = kinds.map((k, i) => ({ path: `d/f${i}` as WorkspacePath, outcome: outcome(k) }))
    const skips = { unreadable_dirs: 0, unreadable_ignore_files: 0 }
    const tree: TreeScanOutcome[] = [
      { files: files.slice(0, 6), skips },
      { files: files.slice(6), skips, resumeAfter: 'd/f9' as WorkspacePath },
    ]
    expect(unpackTree(structuredClone(packTree(tree)))).toStrictEqual([
      { files: [{ path: 'd/f2', outcome: q, files: 3 }, files[3], files[4], files[5]], skips },
      {
        files: [{ path: 'd/f7', outcome: q, files: 2 }, files[8], files[9]],
        skips,
        resumeAfter: 'd/f9',
      },
    ])
  })

  it('keep the count of each directory of files, whatever the mix', () => {
    let s = 1
    const rand = (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), (s >>> 8) % n)
    for (let round = 0; round < 200; round++) {
      const tree: TreeScanOutcome[] = Array.from({ length: 1 + rand(4) }, (_, d) => ({
        files: Array.from({ length: rand(30) }, (_, i) => ({
          path: `d${d}/f${i}` as WorkspacePath,
          outcome: rand(4) === 0 ? OUTCOMES[rand(OUTCOMES.length)]! : plain(0),
        })),
        skips: { unreadable_dirs: 0, unreadable_ignore_files: 0 },
      }))
      const back = unpackTree(structuredClone(packTree(tree)))
      expect(back.map((dir) => dir.files.reduce((n, f) => n + (f.files ?? 1), 0))).toEqual(
        tree.map((dir) => dir.files.length),
      )
      // What is not a quiet run comes back as it was, in order; each run as its last file.
      const unfold = (dir: TreeScanOutcome) =>
        dir.files.map((f) => (f.files === undefined ? f : { path: f.path, outcome: f.outcome }))
      const lastOfRuns = (dir: TreeScanOutcome) =>
        dir.files.filter(
          (f, i) =>
            !(
              i + 1 < dir.files.length &&
              JSON.stringify(f.outcome) === JSON.stringify(plain(0)) &&
              JSON.stringify(dir.files[i + 1]!.outcome) === JSON.stringify(plain(0))
            ),
        )
      expect(back.map(unfold)).toStrictEqual(tree.map(lastOfRuns))
    }
  })
})
