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
  /** How many files each entry stands for (see {@link TreeScanOutcome.files}). */
  counts: Uint32Array
}

/** The result of `outcome` when it is a count and flags only (what the typed arrays carry). */
function plainResult(outcome: FileScanOutcome): ScanResult | undefined {
  if (!('result' in outcome)) return undefined
  const r = outcome.result
  const plain =
    r.records.length === 0 &&
    r.lastMatchLine === 0 &&
    r.shownThrough === 0 &&
    !r.more &&
    (r.lineTooLong === undefined || r.lineTooLong)
  return plain ? r : undefined
}

/** Pack `outcomes` (see {@link PackedOutcomes}). */
export function packOutcomes(outcomes: readonly FileScanOutcome[]): PackedOutcomes {
  const matches = new Float64Array(outcomes.length)
  const flags = new Uint8Array(outcomes.length)
  const other: [number, FileScanOutcome][] = []
  outcomes.forEach((outcome, i) => {
    const r = plainResult(outcome)
    if (r === undefined) {
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

/**
 * Whether a file's outcome says nothing but that it was scanned: no match, no error, not
 * binary, no line too long. {@link packTree} sends runs of such files as one.
 */
function quiet(outcome: FileScanOutcome): boolean {
  const r = plainResult(outcome)
  return r !== undefined && r.matches === 0 && !r.binary && r.lineTooLong === undefined
}

/**
 * Pack a tree scan's outcomes (see {@link PackedOutcomes}). A run of quiet files in a directory
 * travels as its last file and the run's length (most files of a large tree hold no match, and
 * the calling thread only counts them).
 */
export function packTree(tree: readonly TreeScanOutcome[]): PackedTree {
  const kept: TreeScanOutcome['files'] = []
  const dirs = tree.map((dir) => {
    const before = kept.length
    let run = 0
    let last: TreeScanOutcome['files'][number] | undefined
    const flush = () => {
      if (run > 0)
        kept.push(run === 1 ? last! : { path: last!.path, outcome: last!.outcome, files: run })
      run = 0
    }
    for (const file of dir.files) {
      if (quiet(file.outcome)) {
        run += file.files ?? 1
        last = file
        continue
      }
      flush()
      kept.push(file)
    }
    flush()
    return {
      files: kept.length - before,
      skips: dir.skips,
      ...(dir.resumeAfter !== undefined ? { resumeAfter: dir.resumeAfter } : {}),
    }
  })
  return {
    ...packOutcomes(kept.map((f) => f.outcome)),
    paths: kept.map((f) => f.path),
    counts: Uint32Array.from(kept, (f) => f.files ?? 1),
    dirs,
  }
}

/** The tree scan outcomes {@link packTree} packed (runs of quiet files folded). */
export function unpackTree(packed: PackedTree): TreeScanOutcome[] {
  const outcomes = unpackOutcomes(packed)
  let at = 0
  return packed.dirs.map((dir) => {
    const files: TreeScanOutcome['files'] = []
    for (const end = at + dir.files; at < end; at++) {
      const count = packed.counts[at]!
      files.push(
        count === 1
          ? { path: packed.paths[at]!, outcome: outcomes[at]! }
          : { path: packed.paths[at]!, outcome: outcomes[at]!, files: count },
      )
    }
    return {
      files,
      skips: dir.skips,
      ...(dir.resumeAfter !== undefined ? { resumeAfter: dir.resumeAfter } : {}),
    }
  })
}
