import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Agent } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { TEMP_GRACE_MS } from '../../adapters/node/side-files.ts'

// A process killed by SIGKILL in the middle of a write and a download leaves its temp files;
// a workspace hides them from listings and search, and removes them once stale.

let base: string
let root: string
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'isoagent-crash-'))
  root = join(base, 'root')
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const repo = resolve(import.meta.dirname, '../..')
const CHILD = `import { WorkspacePath } from ${JSON.stringify(join(repo, 'adapters/index.ts'))}
import { localWorkspace } from ${JSON.stringify(join(repo, 'adapters/node/index.ts'))}
const ws = localWorkspace(process.argv[2], { searchThreads: 0 })
const marker = new TextEncoder().encode('TEMPCONTENT '.repeat(4096))
const download = await ws.tempFiles.create(WorkspacePath.parse('dl.bin'))
await download.write([marker], 0)
console.log('downloading')
// The lock is held by the test: this write's temp file is complete, the rename never comes.
const big = new Uint8Array(64 * 1024 * 1024).fill(0x41)
big.set(marker)
void ws.write(WorkspacePath.parse('big.txt'), big)
console.log('writing')
setInterval(() => {}, 1000)
`

/** Names in the root that are temp files of a write or a download. */
const temps = () => readdirSync(root).filter((n) => /\.isoagent-(tmp|download)$/.test(n))

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await new Promise((done) => setTimeout(done, 20))
  }
  return check()
}

describe('temp files left by a process killed mid-write', () => {
  it('are hidden from ls and search, kept while young, removed once stale', async () => {
    const { mkdirSync } = await import('node:fs')
    mkdirSync(root)
    writeFileSync(join(root, 'keep.txt'), 'a file\n')
    // Held by this (live) process, so the child's write waits before its rename.
    writeFileSync(join(root, '.big.txt.isoagent-lock'), `${process.pid} ${hostname()} test\n`)
    const script = join(base, 'child.mts')
    writeFileSync(script, CHILD)
    const child = spawn(process.execPath, ['--import', 'tsx', script, root], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
    expect((await lines.next()).value).toBe('downloading')
    expect((await lines.next()).value).toBe('writing')
    expect(await waitFor(() => temps().length === 2, 20_000)).toBe(true)
    // Let the 64 MiB write finish into its temp file, then kill the process.
    await new Promise((done) => setTimeout(done, 500))
    const dead = new Promise((done) => child.once('exit', done))
    child.kill('SIGKILL')
    await dead
    rmSync(join(root, '.big.txt.isoagent-lock'))
    const left = temps()
    expect(left.some((n) => n.startsWith(`.big.txt.${child.pid}-`))).toBe(true)
    expect(left.some((n) => n.startsWith(`.dl.bin.${child.pid}-`))).toBe(true)
    // A temp file of a live process (this one), old enough: never removed while it lives.
    const mine = `.other.txt.${process.pid}-0123456789ab.isoagent-tmp`
    writeFileSync(join(root, mine), 'in progress\n')

    const session = await Agent.create().session(localWorkspace(root, { searchThreads: 0 }))
    try {
      const ls = await session.tool('ls', {})
      expect(ls.output).toContain('keep.txt')
      expect(ls.output).not.toContain('isoagent')
      const glob = await session.tool('search', { mode: 'glob', query: '**/*' })
      expect(glob.output).toContain('keep.txt')
      expect(glob.output).not.toContain('isoagent')
      for (const mode of ['grep', 'bm25']) {
        const found = await session.tool('search', { mode, query: 'TEMPCONTENT' })
        expect(found.output, mode).not.toContain('isoagent')
      }
      // Young temp files are kept (their writer may be elsewhere and alive).
      await new Promise((done) => setTimeout(done, 500))
      expect(temps().length).toBe(3)
    } finally {
      await session.close()
    }

    const old = (Date.now() - TEMP_GRACE_MS - 60_000) / 1000
    for (const n of temps()) utimesSync(join(root, n), old, old)
    const reopened = localWorkspace(root, { searchThreads: 0 })
    try {
      expect(await waitFor(() => temps().length === 1, 5000)).toBe(true)
      expect(temps()).toEqual([mine])
      expect(readdirSync(root).sort()).toEqual([mine, 'keep.txt'])
    } finally {
      await reopened.close?.()
    }
  }, 60_000)
})
