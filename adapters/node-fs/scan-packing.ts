import type {
  FileScanOutcome,
  ScanResult,
  TreeScanOutcome,
} from '../../src/workspace/file-scanner.ts'
import type { WorkspacePath } from '../../src/workspace/workspace-path.ts'

/**
 * Scan outcomes packed for the trip back: a count and two flags per file in typed arrays, and
 * only the outcomes that are more than that (printed lines, errors) as objects. A grep of a
 * large tree answers for tens of thousands of files, and copying one object per file between
 * threads cost more than the scan of many of them.
 */
export interface PackedOutcomes {
  /** Matching lines per file, or -1 where the outcome is in `other` (doubles: any count fits). */
  matches: Float64Array
  /** Per file: 1 binary, 2 a line over the length cap. */
  flags: Uint8Array
  /** The other outcomes, by file index. */
  other: [number, FileScanOutcome][]
}

/** A tree scan's outcomes packed: its directories' files in one list. */
export interface PackedTree extends PackedOutcomes {
  dirs: { files: number; skips: TreeScanOutcome['skips']; resumeAfter?: WorkspacePath }[]
  paths: WorkspacePath[]
}

/** Pack `outcomes` (see {@link PackedOutcomes}). */
export function packOutcomes(outcomes: readonly FileScanOutcome[]): PackedOutcomes {
  const matches = new Float64Array(outcomes.length)
  const flags = new Uint8Array(outcomes.length)
  const other: [number, FileScanOutcome][] = []
  outcomes.forEach((outcome, i) => {
    const r = 'result' in outcome ? outcome.result : undefined
    const plain =
      r !== undefined &&
      r.records.length === 0 &&
      r.lastMatchLine === 0 &&
      r.shownThrough === 0 &&
      !r.more &&
      (r.lineTooLong === undefined || r.lineTooLong)
    if (!plain) {
      matches[i] = -1
      other.push([i, outcome])
      return
    }
    matches[i] = r.matches
    flags[i] = (r.binary ? 1 : 0) | (r.lineTooLong ? 2 : 0)
  })
  return { matches, flags, other }
}

/** The outcomes {@link packOutcomes} packed, as they were. */
export function unpackOutcomes(packed: PackedOutcomes): FileScanOutcome[] {
  const outcomes = new Array<FileScanOutcome>(packed.matches.length)
  for (let i = 0; i < outcomes.length; i++) {
    if (packed.matches[i] === -1) continue
    const flags = packed.flags[i]!
    const result: ScanResult = {
      binary: (flags & 1) !== 0,
      matches: packed.matches[i]!,
      records: [],
      lastMatchLine: 0,
      shownThrough: 0,
      more: false,
    }
    if ((flags & 2) !== 0) result.lineTooLong = true
    outcomes[i] = { result }
  }
  for (const [i, outcome] of packed.other) outcomes[i] = outcome
  return outcomes
}

/** Pack a tree scan's outcomes (see {@link PackedOutcomes}). */
export function packTree(tree: readonly TreeScanOutcome[]): PackedTree {
  const files = tree.flatMap((dir) => dir.files)
  return {
    ...packOutcomes(files.map((f) => f.outcome)),
    paths: files.map((f) => f.path),
    dirs: tree.map((dir) => ({
      files: dir.files.length,
      skips: dir.skips,
      ...(dir.resumeAfter !== undefined ? { resumeAfter: dir.resumeAfter } : {}),
    })),
  }
}

/** The tree scan outcomes {@link packTree} packed, as they were. */
export function unpackTree(packed: PackedTree): TreeScanOutcome[] {
  const outcomes = unpackOutcomes(packed)
  let at = 0
  return packed.dirs.map((dir) => {
    const files: TreeScanOutcome['files'] = []
    for (const end = at + dir.files; at < end; at++)
      files.push({ path: packed.paths[at]!, outcome: outcomes[at]! })
    return {
      files,
      skips: dir.skips,
      ...(dir.resumeAfter !== undefined ? { resumeAfter: dir.resumeAfter } : {}),
    }
  })
}
