// One scenario over any workspace, run on an R2 workspace inside workerd (the real binding) and on
// a memory workspace in Node: the records must be equal. Its record keeps nothing that depends on
// the backend's version tags or the clock.
import { Agent, type ToolResult, type WorkspaceServices } from '../../adapters/index.ts'
import type { R2BucketLike } from '../../adapters/r2/index.ts'

/** One call of the scenario and what came back. */
export interface ScenarioStep {
  step: string
  exitCode: number
  output: string
  errorKind: string | null
  metadata: Record<string, unknown> | null
}

/** What {@link runWorkspaceScenario} returns: plain JSON, the same on every backend. */
export interface ScenarioRecord {
  steps: ScenarioStep[]
  /** Outcomes of two edits racing from one version, sorted: `['ok', 'version_conflict']`. */
  race: string[]
  /** The raced file afterwards: exactly one of the two edits landed. */
  raced: string
  glob: string[]
}

const METADATA_KEYS = ['file_path', 'range', 'source_anchors', 'entries', 'replacements', 'created']

function stepOf(step: string, result: ToolResult): ScenarioStep {
  const metadata: Record<string, unknown> = {}
  for (const key of METADATA_KEYS)
    if (result.metadata && key in result.metadata) metadata[key] = result.metadata[key]
  return {
    step,
    exitCode: result.exitCode,
    output: result.output,
    errorKind: result.errorKind?.type ?? null,
    metadata:
      result.metadata === undefined
        ? null
        : (JSON.parse(JSON.stringify(metadata)) as Record<string, unknown>),
  }
}

/** Where the scenario runs: a workspace, a second one over the same files, and a race gate. */
export interface ScenarioTarget {
  workspace: WorkspaceServices
  /** Another workspace object over the same files (on R2: its own locks, the same bucket). */
  second: WorkspaceServices
  /** Called just before the race: holds the next two conditional writes until both are issued. */
  armRace?(): void
}

/**
 * write, read with offset/limit, edit, ls, search (grep, glob, count) and two edits racing from
 * one version through two workspaces, then hostile input; returns what was observed.
 */
export async function runWorkspaceScenario(target: ScenarioTarget): Promise<ScenarioRecord> {
  const [session, other] = await Promise.all([
    Agent.create().session(target.workspace),
    Agent.create().session(target.second),
  ])
  const steps: ScenarioStep[] = []
  const call = async (step: string, tool: string, args: unknown) => {
    steps.push(stepOf(step, await session.tool(tool, args)))
  }
  try {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i} ${i % 3 === 0 ? 'fizz' : 'buzz'}`)
    await call('write src/a.ts', 'write', {
      file_path: 'src/a.ts',
      content: 'export const a = 1\nexport function handleRequest() {}\n',
    })
    await call('write src/b.ts', 'write', {
      file_path: 'src/b.ts',
      content: '// TODO: handle errors\nexport const b = 2\n',
    })
    await call('write docs/long.md', 'write', {
      file_path: 'docs/long.md',
      content: lines.join('\n') + '\n',
    })
    await call('write .gitignore', 'write', { file_path: '.gitignore', content: 'build/\n' })
    await call('write build/out.js', 'write', {
      file_path: 'build/out.js',
      content: 'TODO built\n',
    })
    await call('write doc.txt', 'write', { file_path: 'doc.txt', content: 'alpha\nbeta\n' })
    await call('read window', 'read', { file_path: 'docs/long.md', offset: 10, limit: 5 })
    await call('read last page', 'read', { file_path: 'docs/long.md', offset: 25 })
    await call('read files', 'read', {
      files: [{ path: 'src/a.ts', offset: 1, limit: 1 }, { path: 'missing.ts' }],
    })
    await call('edit', 'edit', { file_path: 'src/a.ts', old_string: 'a = 1', new_string: 'a = 42' })
    await call('edit absent', 'edit', {
      file_path: 'src/a.ts',
      old_string: 'nothing here',
      new_string: 'x',
    })
    await call('read edited', 'read', { file_path: 'src/a.ts' })
    await call('ls root', 'ls', {})
    await call('ls src', 'ls', { path: 'src' })
    await call('grep', 'search', { mode: 'grep', query: 'TODO' })
    await call('grep regex, context', 'search', { mode: 'grep', query: 'handle\\w+', context: 1 })
    await call('grep count', 'search', { mode: 'grep', query: 'fizz', output_mode: 'count' })
    await call('grep case-insensitive files', 'search', {
      mode: 'grep',
      query: 'EXPORT',
      case_sensitive: false,
      output_mode: 'files_with_matches',
    })
    await call('glob', 'search', { mode: 'glob', query: '**/*.ts' })
    await call('bad: escape', 'read', { file_path: '../outside.txt' })
    await call('bad: unknown argument', 'write', { file_path: 'x.txt', content: 'x', bogus: 1 })
    await call('bad: read a directory', 'read', { file_path: 'src' })

    target.armRace?.()
    const raced = await Promise.all([
      session.editFile('doc.txt', 'alpha', 'ALPHA'),
      other.editFile('doc.txt', 'beta', 'BETA'),
    ])
    const race = raced.map((r) => r.errorKind?.type ?? (r.exitCode === 0 ? 'ok' : 'failed')).sort()
    const text = await session.readFile('doc.txt')
    return { steps, race, raced: text, glob: await session.glob('**/*') }
  } finally {
    await Promise.all([session.close(), other.close()])
  }
}

/**
 * `bucket` with a gate on conditional puts: once armed, the next two `put`s that carry `onlyIf`
 * wait until both have been issued (or 2 s passed), so both writers have passed their own version
 * check and R2 alone decides which one lands.
 */
export function gatedBucket(bucket: R2BucketLike): {
  bucket: R2BucketLike
  arm(): void
  held: () => number
} {
  let waiting: (() => void)[] = []
  let armed = 0
  let held = 0
  const gated: R2BucketLike = {
    head: (key) => bucket.head(key),
    get: (key, options) => bucket.get(key, options),
    list: (options) => bucket.list(options),
    delete: (keys) => bucket.delete(keys),
    async put(key, value, options) {
      if (armed > 0 && options?.onlyIf !== undefined) {
        armed--
        held++
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          if (armed === 0) {
            for (const release of waiting) release()
            waiting = []
          } else setTimeout(resolve, 2000)
        })
      }
      return bucket.put(key, value, options)
    },
  }
  return {
    bucket: gated,
    arm: () => {
      armed = 2
    },
    held: () => held,
  }
}
