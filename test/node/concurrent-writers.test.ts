import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Agent, type ToolResult } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve } from '../../edge/node.ts'

// Two writers over one folder: every change either lands or fails with version_conflict, in one
// process (two sessions, two HTTP sessions) and across two OS processes.

type Call = (name: string, args: Record<string, unknown>) => Promise<ToolResult>

const END = '<end>\n'
let root: string

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-writers-'))
  writeFileSync(join(root, 'log.txt'), `start\n${END}`)
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

/** `n` edits that each insert one marker line; the markers of the successful ones. */
async function insertMarkers(call: Call, tag: string, n: number): Promise<string[]> {
  const landed: string[] = []
  for (let i = 0; i < n; i++) {
    const marker = `${tag}-${i}`
    const r = await call('edit', {
      file_path: 'log.txt',
      old_string: END,
      new_string: `${marker}\n${END}`,
    })
    if (r.exitCode === 0) landed.push(marker)
    else expect(r.errorKind?.type, r.output).toBe('version_conflict')
  }
  return landed
}

/** Every reported success is a line of the final file, each once. */
function expectAllLanded(landed: string[]) {
  const lines = readFileSync(join(root, 'log.txt'), 'utf8').split('\n')
  const missing = landed.filter((m) => !lines.includes(m))
  expect(missing).toEqual([])
  expect(lines.length).toBe(landed.length + 3) // start, markers, <end>, ''
  expect(landed.length).toBeGreaterThan(0)
}

describe('concurrent writers over one folder', () => {
  it('two sessions: every successful edit is in the file', async () => {
    const agent = Agent.create()
    const a = await agent.session(localWorkspace(root))
    const b = await agent.session(localWorkspace(root))
    try {
      const call =
        (s: typeof a): Call =>
        (name, args) =>
          s.tool(name, args)
      const [x, y] = await Promise.all([
        insertMarkers(call(a), 'a', 50),
        insertMarkers(call(b), 'b', 50),
      ])
      expectAllLanded([...x, ...y])
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('two sessions: appends with the same expected_offset, one lands per round', async () => {
    const agent = Agent.create()
    const a = await agent.session(localWorkspace(root))
    const b = await agent.session(localWorkspace(root))
    try {
      const landed: string[] = []
      for (let round = 0; round < 50; round++) {
        const size = Buffer.byteLength(readFileSync(join(root, 'log.txt')))
        const results = await Promise.all(
          [a, b].map((s, i) =>
            s.tool('write', {
              file_path: 'log.txt',
              mode: 'append',
              content: `r${round}-${i}\n`,
              expected_offset: size,
            }),
          ),
        )
        const ok = results.flatMap((r, i) => (r.exitCode === 0 ? [`r${round}-${i}`] : []))
        for (const r of results)
          if (r.exitCode !== 0) expect(r.errorKind?.type).toBe('version_conflict')
        expect(ok.length, `round ${round}`).toBe(1)
        landed.push(...ok)
      }
      expectAllLanded(landed)
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('two HTTP sessions on a real server: every successful edit is in the file', async () => {
    const app = createApp({ workspace: () => localWorkspace(root) })
    const server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    try {
      const open = async (): Promise<Call> => {
        const res = await fetch(`${server.url}/v1/sessions`, { method: 'POST', body: '{}' })
        expect(res.status).toBe(201)
        const { id } = (await res.json()) as { id: string }
        return async (name, args) => {
          const r = await fetch(`${server.url}/v1/sessions/${id}/tools/${name}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ args }),
          })
          expect(r.status).toBe(200)
          return (await r.json()) as ToolResult
        }
      }
      const [a, b] = await Promise.all([open(), open()])
      const [x, y] = await Promise.all([insertMarkers(a, 'a', 50), insertMarkers(b, 'b', 50)])
      expectAllLanded([...x, ...y])
    } finally {
      await server.close()
    }
  })

  it('two OS processes: every successful edit is in the file', async () => {
    const script = join(root, '..', `${root.split('/').pop()}-writer.mts`)
    const repo = resolve(import.meta.dirname, '../..')
    writeFileSync(
      script,
      `import { Agent, WorkspacePath } from ${JSON.stringify(join(repo, 'adapters/index.ts'))}
import { localWorkspace } from ${JSON.stringify(join(repo, 'adapters/node/index.ts'))}
const [root, tag] = process.argv.slice(2)
const session = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
console.log('ready')
await new Promise((go) => process.stdin.once('data', go))
const landed = []
const failures = []
// Straight on the workspace port, so the two processes' writes overlap as much as they can.
const ws = session.workspace
const path = WorkspacePath.parse('log.txt')
for (let i = 0; i < 400; i++) {
  const marker = tag + '-' + i
  const stat = await ws.stat(path)
  const text = new TextDecoder().decode(await ws.read(path))
  const next = new TextEncoder().encode(text.replace('<end>\\n', marker + '\\n<end>\\n'))
  try {
    await ws.write(path, next, { precondition: { ifVersion: stat.version } })
    landed.push(marker)
  } catch (error) {
    failures.push(error.code)
  }
}
console.log(JSON.stringify({ landed, failures }))
await session.close()
process.exit(0)
`,
    )
    try {
      const children = ['p', 'q'].map((tag) =>
        spawn(process.execPath, ['--import', 'tsx', script, root, tag], {
          cwd: repo,
          stdio: ['pipe', 'pipe', 'inherit'],
        }),
      )
      const lines = children.map((c) =>
        createInterface({ input: c.stdout! })[Symbol.asyncIterator](),
      )
      for (const l of lines) expect((await l.next()).value).toBe('ready')
      for (const c of children) c.stdin!.write('go\n')
      const reports = await Promise.all(
        lines.map(
          async (l) =>
            JSON.parse((await l.next()).value as string) as {
              landed: string[]
              failures: string[]
            },
        ),
      )
      for (const r of reports)
        expect(new Set(r.failures)).toEqual(new Set(r.failures.length ? ['version_conflict'] : []))
      expectAllLanded(reports.flatMap((r) => r.landed))
    } finally {
      rmSync(script, { force: true })
    }
  }, 60_000)
})

describe('write locks left by a crash', () => {
  it('takes over a lock whose holder is dead, and leaves none behind', async () => {
    const { hostname } = await import('node:os')
    const { spawnSync } = await import('node:child_process')
    // A pid that was alive a moment ago and is gone now.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']).stdout.toString()
    writeFileSync(join(root, '.log.txt.isoagent-lock'), `${dead.trim()} ${hostname()} gone\n`)
    const session = await Agent.create().session(localWorkspace(root))
    try {
      const started = Date.now()
      const r = await session.tool('write', { file_path: 'log.txt', content: 'after\n' })
      expect(r.exitCode, r.output).toBe(0)
      expect(Date.now() - started).toBeLessThan(5000)
      expect(readFileSync(join(root, 'log.txt'), 'utf8')).toBe('after\n')
      const { readdirSync } = await import('node:fs')
      expect(readdirSync(root)).toEqual(['log.txt'])
    } finally {
      await session.close()
    }
  })
})
