import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WorkspacePath } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'

// Another process swaps a folder and a file of the workspace for symlinks to outside it, over and
// over, while the workspace reads and writes them: nothing outside may be read or written.

let base: string
let root: string
let outside: string
let swapper: ChildProcess | undefined

const SWAPPER = `
const fs = require('node:fs')
const [root, outside] = process.argv.slice(1)
const pause = new Int32Array(new SharedArrayBuffer(4))
// Hold each state a moment, so that calls in flight meet the symlink.
const hold = () => Atomics.wait(pause, 0, 0, 0.3)
const swap = (name, target) => {
  const at = root + '/' + name, aside = root + '/' + name + '.aside', link = root + '/' + name + '.link'
  try {
    fs.symlinkSync(target, link)
    fs.renameSync(at, aside)
    fs.renameSync(link, at)
    hold()
    fs.unlinkSync(at)
    try { fs.renameSync(aside, at) } catch { fs.rmSync(at, { recursive: true, force: true }); fs.renameSync(aside, at) }
    hold()
  } catch {
    fs.rmSync(link, { force: true })
  }
}
console.log('swapping')
for (;;) {
  swap('dir', outside + '/dir')
  swap('file.txt', outside + '/secret.txt')
}
`

/** Every file below `dir`, as paths relative to it. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tree(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  )
}

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), 'isoagent-swap-'))
  root = join(base, 'root')
  outside = join(base, 'outside')
  mkdirSync(join(root, 'dir'), { recursive: true })
  mkdirSync(join(outside, 'dir'), { recursive: true })
  writeFileSync(join(root, 'dir', 'inner.txt'), 'INSIDE inner\n')
  writeFileSync(join(root, 'file.txt'), 'INSIDE file\n')
  writeFileSync(join(outside, 'dir', 'inner.txt'), 'OUTSIDE inner\n')
  writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE secret\n')
  swapper = spawn(process.execPath, ['-e', SWAPPER, root, outside], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise((started) => swapper!.stdout!.once('data', started))
})
afterEach(async () => {
  if (swapper?.exitCode === null) {
    const gone = new Promise((done) => swapper!.once('exit', done))
    swapper.kill('SIGKILL')
    await gone
  }
  rmSync(base, { recursive: true, force: true })
})

describe('a path swapped for a symlink during a call', () => {
  it('4,000 reads never return a file outside the root', async () => {
    const ws = localWorkspace(root, { searchThreads: 0 })
    const text = new TextDecoder()
    let escapes = 0
    let refused = 0
    let inside = 0
    for (let i = 0; i < 4000; i++) {
      const path = WorkspacePath.parse(i % 2 === 0 ? 'dir/inner.txt' : 'file.txt')
      // Half with a range too long for a synchronous read: the asynchronous open.
      const range = i % 4 < 2 ? {} : { offset: 0, length: 4 * 1024 * 1024 }
      try {
        const got = text.decode(await ws.read(path, range))
        if (got.includes('OUTSIDE')) escapes++
        else if (got.includes('INSIDE')) inside++
      } catch {
        refused++
      }
    }
    await ws.close?.()
    expect(escapes).toBe(0)
    expect(inside).toBeGreaterThan(0)
    // The swapper did get in the way: some reads met a swapped or missing path.
    expect(refused).toBeGreaterThan(0)
  }, 120_000)

  it('3,000 writes never land outside the root', async () => {
    const ws = localWorkspace(root, { searchThreads: 0 })
    const bytes = new TextEncoder().encode('written\n')
    let refused = 0
    for (let i = 0; i < 3000; i++) {
      const path = WorkspacePath.parse(
        i % 3 === 0 ? 'file.txt' : i % 3 === 1 ? `dir/w${i}.txt` : `dir/sub${i}/w.txt`,
      )
      await ws.write(path, bytes).catch(() => refused++)
    }
    await ws.close?.()
    expect(tree(outside).sort()).toEqual(['dir/inner.txt', 'secret.txt'])
    expect(refused).toBeGreaterThan(0)
  }, 120_000)
})
