// A tool scenario over any workspace, through the public entries only: read, write, edit, patch,
// ls, search (grep, glob, bm25) and hostile input. Its record is plain JSON with nothing clock-
// or backend-dependent in it, so the browser workspace in Chromium and the memory workspace in
// Node must produce the same one (browser-workspace.test.ts).
import {
  Agent,
  WorkspacePath,
  type ToolResult,
  type WorkspaceServices,
} from '../../adapters/index.ts'

const encoder = new TextEncoder()
const BOM = [0xef, 0xbb, 0xbf]

/** The files the scenario starts from. */
export const SCENARIO_FILES: Record<string, string | Uint8Array> = {
  'README.md': '# demo\n\nThe quick brown fox jumps over the lazy dog.\n',
  'src/app.ts': "import { shout } from './util/strings'\nexport const x = 1\nexport const y = 2\n",
  'src/util/strings.ts':
    'export function shout(text: string) {\n  return text.toUpperCase()\n}\n\nexport const quiet = (text: string) => text.toLowerCase()\n',
  'notes/crlf.txt': 'alpha\r\nbeta\r\ngamma\r\n',
  'bom.txt': new Uint8Array([...BOM, ...encoder.encode('héllo wörld — ✓ 日本語\nsecond line\n')]),
  '.gitignore': 'build/\n*.log\n',
  'build/out.js': 'export const x = "built"\n',
  'debug.log': 'export const x = "log"\n',
  '.hidden/secret.ts': 'export const x = "hidden"\n',
  'bin/blob.bin': new Uint8Array([0x65, 0x78, 0x70, 0x6f, 0x72, 0x74, 0, 1, 2, 3]),
  'docs/guide.md':
    '# Guide\n\nUse shout to upper-case text and quiet to lower-case it.\n\n## Storage\n\nFiles live in IndexedDB through lightning-fs.\n',
}

/** One call of the scenario and everything that came back. */
export interface ScenarioStep {
  step: string
  tool: string
  exitCode: number
  output: string
  errorKind: Record<string, unknown> | null
  metadata: Record<string, unknown> | null
}

/** What {@link runWorkspaceScenario} returns. */
export interface ScenarioRecord {
  toolNames: string[]
  steps: ScenarioStep[]
  /** Every file (lowercase hex) at named points. */
  trees: Record<string, Record<string, string>>
}

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/** Every file of `workspace` as hex by path, walked through the port (symlinks by name). */
export async function treeHex(workspace: WorkspaceServices): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  async function visit(dir: WorkspacePath) {
    let after: string | undefined
    for (;;) {
      const page = await workspace.list(dir, { after, limit: 100 })
      for (const entry of page.entries) {
        const child = WorkspacePath.child(dir, entry.name)
        if (entry.kind === 'directory') await visit(child)
        else if (entry.kind === 'file') out[child] = hex(await workspace.read(child))
        else out[`${child}@`] = entry.kind
      }
      if (page.next === undefined) return
      after = page.next
    }
  }
  await visit(WorkspacePath.root)
  return out
}

function stepOf(step: string, result: ToolResult): ScenarioStep {
  // Plain JSON only (no shared references, no undefined), so records compare across runtimes.
  const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
  return {
    step,
    tool: result.name,
    exitCode: result.exitCode,
    output: result.output,
    errorKind: result.errorKind === undefined ? null : json(result.errorKind),
    metadata: result.metadata === undefined ? null : json(result.metadata),
  }
}

/**
 * Seeds `workspace` (empty) with {@link SCENARIO_FILES}, runs the scenario in a session and closes
 * it (which closes the workspace).
 */
export async function runWorkspaceScenario(workspace: WorkspaceServices): Promise<ScenarioRecord> {
  for (const [path, content] of Object.entries(SCENARIO_FILES)) {
    await workspace.write(
      WorkspacePath.parse(path),
      typeof content === 'string' ? encoder.encode(content) : content,
    )
  }
  const session = await Agent.create().session(workspace)
  const steps: ScenarioStep[] = []
  const trees: ScenarioRecord['trees'] = {}
  const call = async (step: string, tool: string, args: unknown) => {
    steps.push(stepOf(step, await session.tool(tool, args)))
  }
  try {
    trees.initial = await treeHex(workspace)

    await call('read single (CRLF)', 'read', { file_path: 'notes/crlf.txt' })
    await call('read window (BOM)', 'read', { file_path: 'bom.txt', offset: 1, limit: 1 })
    await call('read files batch', 'read', {
      files: [{ path: 'bom.txt' }, { path: 'src/app.ts', offset: 1 }, { path: 'missing.txt' }],
    })

    await call('write create', 'write', { file_path: 'out/log.txt', content: 'one\n' })
    await call('write append', 'write', {
      file_path: 'out/log.txt',
      content: 'two ✓\n',
      mode: 'append',
      expected_offset: 4,
    })
    await call('write append re-send', 'write', {
      file_path: 'out/log.txt',
      content: 'two ✓\n',
      mode: 'append',
      expected_offset: 4,
    })
    await call('write append stale offset', 'write', {
      file_path: 'out/log.txt',
      content: 'three\n',
      mode: 'append',
      expected_offset: 4,
    })
    await call('write overwrite', 'write', { file_path: 'README.md', content: '# demo\n\nNew.\n' })

    await call('edit dry_run', 'edit', {
      file_path: 'notes/crlf.txt',
      old_string: 'beta',
      new_string: 'BETA',
      dry_run: true,
    })
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
    await call('edit replace_all', 'edit', {
      file_path: 'src/util/strings.ts',
      old_string: 'text',
      new_string: 'value',
      replace_all: true,
      expected_replacements: 4,
    })

    await call('patch', 'patch', {
      file_path: 'src/app.ts',
      diff: [
        '--- a/src/app.ts',
        '+++ b/src/app.ts',
        '@@ -2,2 +2,3 @@',
        ' export const x = 1',
        '-export const y = 2',
        '+export const y = 3',
        "+export const z = 'ζ'",
        '',
      ].join('\n'),
    })
    await call('patch create', 'patch', {
      file_path: 'src/new.ts',
      diff: '--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1,1 @@\n+export const fresh = true\n',
    })

    await call('ls root', 'ls', {})
    await call('ls dir', 'ls', { path: 'src' })
    await call('ls paged', 'ls', { path: '', limit: 3 })

    await call('grep content', 'search', { mode: 'grep', query: 'export const' })
    await call('grep context', 'search', {
      mode: 'grep',
      query: 'toUpperCase',
      context: 1,
    })
    await call('grep files', 'search', {
      mode: 'grep',
      query: 'x',
      output_mode: 'files_with_matches',
    })
    await call('grep count', 'search', { mode: 'grep', query: 'const', output_mode: 'count' })
    await call('grep summary', 'search', { mode: 'grep', query: 'e', output_mode: 'summary' })
    await call('grep case-insensitive', 'search', {
      mode: 'grep',
      query: 'INDEXEDDB',
      case_sensitive: false,
    })
    await call('grep paged', 'search', { mode: 'grep', query: 'export', limit: 2 })
    await call('glob **/*.ts', 'search', { mode: 'glob', query: '**/*.ts' })
    await call('glob *.md', 'search', { mode: 'glob', query: '*.md' })
    await call('glob under src', 'search', { mode: 'glob', query: '*.ts', path: 'src/util' })
    await call('bm25', 'search', { mode: 'bm25', query: 'upper case text' })

    trees['before bad input'] = await treeHex(workspace)
    await call('bad: ../ escape', 'read', { file_path: '../etc/passwd' })
    await call('bad: unknown property', 'write', {
      file_path: 'out/log.txt',
      content: 'x',
      bogus: true,
    })
    await call('bad: NUL in path', 'write', { file_path: 'a\u0000b', content: 'x' })
    await call('bad: write under a file', 'write', { file_path: 'README.md/x', content: 'x' })
    await call('bad: write over a directory', 'write', { file_path: 'src', content: 'x' })
    await call('bad: read a directory', 'read', { file_path: 'src' })
    await call('bad: read binary', 'read', { file_path: 'bin/blob.bin' })
    await call('bad: edit missing file', 'edit', {
      file_path: 'nope.ts',
      old_string: 'a',
      new_string: 'b',
    })
    await call('bad: patch garbage', 'patch', { file_path: 'src/app.ts', diff: 'not a diff' })
    await call('bad: ls a file', 'ls', { path: 'README.md' })
    await call('bad: search regex', 'search', { mode: 'grep', query: '(' })
    await call('bad: search escape', 'search', { mode: 'glob', query: '*', path: '../..' })
    await call('bad: search missing path', 'search', { mode: 'grep', query: 'x', path: 'nope' })
    trees.final = await treeHex(workspace)

    // git (isomorphic-git over the workspace): commit ids and dates depend on the clock, so they
    // are masked (and metadata that holds them dropped); everything else must match the memory
    // workspace in Node. Afterwards .git is removed and src/app.ts restored, so the files are
    // exactly those of trees.final again.
    const appBefore = await workspace.read(WorkspacePath.parse('src/app.ts'))
    const CLOCKED = new Set([
      'a3s_tool_result_evidence',
      'oid',
      'parent',
      'head',
      'start',
      'commits',
      'dropped',
    ])
    const mask = (text: string) =>
      text
        .replace(/[0-9a-f]{40}/g, '<oid>')
        .replace(/\b[0-9a-f]{7}\b/g, '<abbrev>')
        .replace(/Date: [^\\"]*/g, 'Date:   <date>')
    const git = async (step: string, args: Record<string, unknown>) => {
      const s = stepOf(step, await session.tool('git', args))
      if (s.metadata !== null)
        s.metadata = Object.fromEntries(Object.entries(s.metadata).filter(([k]) => !CLOCKED.has(k)))
      steps.push(JSON.parse(mask(JSON.stringify(s))) as ScenarioStep)
    }
    await git('git init', { command: 'init' })
    await git('git status (unborn)', { command: 'status' })
    await git('git add', { command: 'add' })
    await git('git commit', { command: 'commit', message: 'Scenario commit' })
    await call('write after commit', 'write', { file_path: 'src/app.ts', content: 'changed\n' })
    await git('git diff', { command: 'diff' })
    await git('git branch create', { command: 'branch', name: 'topic' })
    await git('git stash push', { command: 'stash' })
    await git('git stash list', { command: 'stash', subcommand: 'list' })
    await git('git stash pop', { command: 'stash', subcommand: 'pop' })
    await git('git status', { command: 'status' })
    await git('git log', { command: 'log' })
    await workspace.remove(WorkspacePath.parse('.git'), { recursive: true })
    await workspace.write(WorkspacePath.parse('src/app.ts'), appBefore)

    return { toolNames: session.toolNames(), steps, trees }
  } finally {
    await session.close()
  }
}
