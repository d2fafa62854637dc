import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// A finished process exits: neither the scan pool's workers nor their ports hold it open (idle
// workers would otherwise keep it for their 2-minute idle time).

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
const dist = new URL('../../dist/', import.meta.url).href
/** Well under the idle time, with room for a loaded machine. */
const EXIT_WITHIN_MS = 15_000
let root: string
/** Where the scripts are written (outside the workspace). */
let scripts: string

interface Run {
  code: number | null
  stdout: string
  stderr: string
  ms: number
}

function run(args: string[]): Promise<Run> {
  const started = Date.now()
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer)
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    }),
  )
}

/**
 * A library user's script file (run as a file: `node -e` exits where a file did not): grep and
 * glob through a session, close it or not, no process.exit.
 */
function script(close: boolean) {
  const file = join(scripts, `script-${close}.mjs`)
  writeFileSync(
    file,
    `
    const { Agent } = await import(${JSON.stringify(dist + 'adapters/index.js')})
    const { localWorkspace } = await import(${JSON.stringify(dist + 'adapters/node/index.js')})
    const session = await Agent.create().session(localWorkspace(${JSON.stringify(root)}))
    const grep = await session.tool('search', { mode: 'grep', query: 'needle' })
    const glob = await session.tool('search', { mode: 'glob', query: '**/*.ts' })
    console.log(grep.output.match(/a needle/g).length, glob.output.match(/\\.ts$/gm).length)
    ${close ? 'await session.close()' : ''}
  `,
  )
  return file
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-exit-'))
  scripts = mkdtempSync(join(tmpdir(), 'isoagent-exit-scripts-'))
  // 3,000 files: 30 directories of 50 text files, each with a match,
  // and 50 TypeScript files.
  for (let d = 0; d < 30; d++) {
    mkdirSync(join(root, `d${d}`, 'sub'), { recursive: true })
    for (let f = 0; f < 50; f++) {
      writeFileSync(join(root, `d${d}`, `f${f}.txt`), `a needle ${d} ${f}\n`)
      writeFileSync(join(root, `d${d}`, 'sub', `g${f}.ts`), `export const x${f} = ${f}\n`)
    }
  }
})
afterAll(() => {
  rmSync(root, { recursive: true, force: true })
  rmSync(scripts, { recursive: true, force: true })
})

describe('a finished process exits at once', () => {
  it('the CLI after a grep and after a glob over 3,000 files', async () => {
    const [grep, glob] = await Promise.all([
      run([bin, 'call', 'search', '{"mode":"grep","query":"needle"}', '--workspace', root]),
      run([bin, 'call', 'search', '{"mode":"glob","query":"**/*.ts","limit":2}', '-w', root]),
    ])
    expect(grep).toMatchObject({ code: 0, stderr: '' })
    expect(grep.stdout).toContain('d0/f0.txt:1:a needle 0 0\n')
    expect(grep.stdout.match(/a needle/g)).toHaveLength(200)
    expect(glob).toMatchObject({ code: 0, stderr: '' })
    expect(glob.stdout).toMatch(/^d0\/sub\/g0\.ts\nd0\/sub\/g1\.ts\n\.\.\. \(more files/)
    expect(grep.ms).toBeLessThan(EXIT_WITHIN_MS)
    expect(glob.ms).toBeLessThan(EXIT_WITHIN_MS)
  }, 40_000)

  it("a library user's script, with and without session.close()", async () => {
    const runs = await Promise.all([true, false].map((close) => run([script(close)])))
    for (const r of runs) {
      expect(r).toMatchObject({ code: 0, stderr: '' })
      expect(r.stdout).toBe('200 200\n')
      expect(r.ms).toBeLessThan(EXIT_WITHIN_MS)
    }
  }, 40_000)
})
