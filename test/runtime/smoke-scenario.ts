// The isomorphism smoke scenario: the same calls, through the public `isoagent` entry only, run in
// Node (directly), in workerd (bundled into a Worker) and in Chromium (bundled into a page). Its
// record is plain JSON with nothing runtime- or clock-dependent in it, so the three runs must be
// deeply equal.
import { Agent, WorkspacePath, memoryWorkspace, type ToolResult } from '../../adapters/index.ts'

/** One tool call of the scenario and what came back. */
export interface SmokeStep {
  step: string
  tool: string
  exitCode: number
  output: string
  errorKind: Record<string, unknown> | null
  metadata: Record<string, unknown> | null
}

/** What {@link runSmokeScenario} returns: JSON-serialisable and deterministic. */
export interface SmokeRecord {
  toolNames: string[]
  steps: SmokeStep[]
  /** Workspace bytes (lowercase hex) at named points of the scenario. */
  snapshots: Record<string, Record<string, string>>
}

const encoder = new TextEncoder()
const BOM = [0xef, 0xbb, 0xbf]

/** Initial files: a CRLF file, a UTF-8 BOM file with multi-byte text, a plain LF source file. */
export const SMOKE_FILES = {
  'notes/crlf.txt': 'alpha\r\nbeta\r\ngamma\r\n',
  'bom.txt': new Uint8Array([...BOM, ...encoder.encode('héllo wörld — ✓ 日本語\nsecond line\n')]),
  'src/app.ts': 'export const x = 1\nexport const y = 2\n',
} as const

/** Files whose bytes the record captures (created ones included). */
const TRACKED = ['notes/crlf.txt', 'bom.txt', 'src/app.ts', 'log.txt'] as const

// Top-level metadata keys the record keeps. An allowlist, so a later field that depends on the
// runtime or the clock (a version, an mtime) cannot make the runs differ by accident.
const METADATA_KEYS = [
  'file_path',
  'path',
  'file',
  'range',
  'batch',
  'files',
  'source_anchors',
  'mode',
  'created',
  'applied',
  'bytes_written',
  'next_offset',
  'replacement_count',
  'replacements',
  'dry_run',
  'first_line',
  'diff',
  'diff_truncated',
  'hunks',
  'lines_added',
  'lines_removed',
  'line_ending',
  'bom',
  'before',
  'after',
  'returned',
  'entries',
  'truncated',
  'next_cursor',
] as const

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

function selectMetadata(metadata: Record<string, unknown> | undefined) {
  if (metadata === undefined) return null
  const picked: Record<string, unknown> = {}
  for (const key of METADATA_KEYS) if (key in metadata) picked[key] = metadata[key]
  // Round-trip so the record holds plain JSON values only (no shared references, no undefined).
  return JSON.parse(JSON.stringify(picked)) as Record<string, unknown>
}

function stepOf(step: string, result: ToolResult): SmokeStep {
  return {
    step,
    tool: result.name,
    exitCode: result.exitCode,
    output: result.output,
    errorKind:
      result.errorKind === undefined
        ? null
        : (JSON.parse(JSON.stringify(result.errorKind)) as Record<string, unknown>),
    metadata: selectMetadata(result.metadata),
  }
}

/**
 * Runs read (single and `files` batch), write (overwrite, compare-and-append, idempotent re-send,
 * stale offset), edit (dry run, CRLF, BOM), patch, ls and two hostile inputs over a memory
 * workspace, and returns everything observable as plain JSON.
 */
export async function runSmokeScenario(): Promise<SmokeRecord> {
  const workspace = memoryWorkspace({ ...SMOKE_FILES })
  const session = await Agent.create().session(workspace)
  const steps: SmokeStep[] = []
  const snapshots: SmokeRecord['snapshots'] = {}

  const call = async (step: string, tool: string, args: unknown) => {
    steps.push(stepOf(step, await session.tool(tool, args)))
  }
  const snapshot = async (label: string) => {
    const files: Record<string, string> = {}
    for (const name of TRACKED) {
      const path = WorkspacePath.parse(name)
      if ((await workspace.stat(path)) !== undefined) files[name] = hex(await workspace.read(path))
    }
    snapshots[label] = files
  }

  try {
    await snapshot('initial')

    // read
    await call('read single (CRLF)', 'read', { file_path: 'notes/crlf.txt' })
    await call('read single window (BOM)', 'read', { file_path: 'bom.txt', offset: 1, limit: 1 })
    await call('read files batch', 'read', {
      files: [{ path: 'bom.txt' }, { path: 'src/app.ts', offset: 1 }, { path: 'missing.txt' }],
    })

    // write
    await call('write overwrite (create)', 'write', { file_path: 'log.txt', content: 'one\n' })
    await call('write append expected_offset', 'write', {
      file_path: 'log.txt',
      content: 'two ✓\n',
      mode: 'append',
      expected_offset: 4,
    })
    await call('write append re-send (idempotent)', 'write', {
      file_path: 'log.txt',
      content: 'two ✓\n',
      mode: 'append',
      expected_offset: 4,
    })
    await call('write append stale offset', 'write', {
      file_path: 'log.txt',
      content: 'three\n',
      mode: 'append',
      expected_offset: 4,
    })
    await snapshot('after write')

    // edit
    steps.push(
      stepOf(
        'edit dry_run (CRLF)',
        await session.editFile('notes/crlf.txt', 'beta', 'BETA', { dry_run: true }),
      ),
    )
    await snapshot('after dry_run')
    await call('edit (CRLF)', 'edit', {
      file_path: 'notes/crlf.txt',
      old_string: 'beta',
      new_string: 'BETA',
    })
    await call('edit (BOM, multi-byte)', 'edit', {
      file_path: 'bom.txt',
      old_string: 'wörld',
      new_string: 'Welt ✓',
    })

    // patch
    await call('patch', 'patch', {
      file_path: 'src/app.ts',
      diff: [
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
        '@@ -1,2 +1,3 @@',
        ' export const x = 1',
        '-export const y = 2',
        '+export const y = 3',
        "+export const z = 'ζ'",
        '',
      ].join('\n'),
    })

    // ls
    await call('ls root', 'ls', {})
    await call('ls dir', 'ls', { path: 'notes' })

    // search: Node and Chromium find and count in the WebAssembly SIMD kernels' memory (the
    // memory workspace reads into the scan's buffers), workerd in JavaScript (it compiles no
    // WebAssembly at run time): the answers must agree.
    await call('grep content', 'search', { mode: 'grep', query: 'export const', context: 1 })
    await call('grep case-insensitive (CRLF)', 'search', {
      mode: 'grep',
      query: 'beta|GAMMA',
      case_sensitive: false,
    })
    await call('grep count', 'search', { mode: 'grep', query: 'e', output_mode: 'count' })
    await call('grep multi-byte literal', 'search', {
      mode: 'grep',
      query: '✓ 日本語',
      output_mode: 'files_with_matches',
    })

    // hostile input: must fail typed and change nothing
    await snapshot('before bad input')
    await call('bad: ../ escape', 'read', { file_path: '../etc/passwd' })
    await call('bad: unknown property', 'write', {
      file_path: 'log.txt',
      content: 'x',
      bogus: true,
    })
    await snapshot('final')

    // git on the memory workspace (isomorphic-git): commit ids and dates depend on the clock, so
    // they are masked; everything else must match across runtimes.
    const gitCall = async (step: string, command: string, args: Record<string, unknown> = {}) => {
      const s = stepOf(step, await session.git(command, args))
      s.output = s.output
        .replace(/[0-9a-f]{40}/g, '<oid>')
        .replace(/^(\[main(?: \(root-commit\))?) [0-9a-f]{7}\]/m, '$1 <abbrev>]')
        .replace(/^Date: .*$/gm, 'Date:   <date>')
      steps.push(s)
    }
    await gitCall('git status (no repository)', 'status')
    await gitCall('git init', 'init')
    await gitCall('git add', 'add')
    await gitCall('git commit', 'commit', { message: 'Smoke commit' })
    await session.writeFile('src/app.ts', 'export const x = 2\n')
    await gitCall('git status', 'status')
    await gitCall('git diff', 'diff')
    await gitCall('git log', 'log')

    return { toolNames: session.toolNames(), steps, snapshots }
  } finally {
    await session.close()
  }
}
