// `isoagent serve` as a user runs it: the built bin, a free port, the printed token and curl line.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../../bin/isoagent.mjs', import.meta.url))
const hasCurl = spawnSync('curl', ['--version']).status === 0
let dir: string

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'isoagent-serve-'))
  writeFileSync(join(dir, 'hello.txt'), 'hello from disk\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Start `isoagent serve` and wait for its banner. */
async function startServe(args: string[]): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ISOAGENT_TOKEN: '' },
  })
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const deadline = Date.now() + 20_000
  while (!out.includes('Ctrl-C stops the server.')) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`isoagent serve did not start:\n${out}`)
    await new Promise((r) => setTimeout(r, 25))
  }
  return { child, out: () => out }
}

describe('isoagent serve (built bin)', () => {
  it('serves a directory with a generated token, prints a working curl line, and stops on SIGTERM', async () => {
    const { child, out } = await startServe(['--workspace', dir, '--port', '0'])
    const banner = out()
    const open = /open: +(http:\/\/127\.0\.0\.1:(\d+))\/\?token=(\S+)/.exec(banner)
    expect(open, banner).not.toBeNull()
    const [, url, , token] = open!
    expect(decodeURIComponent(token!)).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const auth = { authorization: `Bearer ${decodeURIComponent(token!)}` }

    const health = await fetch(`${url}/v1/health`)
    expect(await health.json()).toMatchObject({ ok: true, runtime: 'node' })
    expect((await fetch(`${url}/v1/sessions`, { method: 'POST' })).status).toBe(401)

    if (hasCurl) {
      const line = /try: +(.+)/.exec(banner)![1]!
      const run = spawnSync('sh', ['-c', line], { encoding: 'utf8' })
      expect(run.status, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ name: 'ls', exitCode: 0, output: 'hello.txt' })
    }

    const { id } = (await (
      await fetch(`${url}/v1/sessions`, { method: 'POST', headers: auth })
    ).json()) as { id: string }
    const read = await fetch(`${url}/v1/sessions/${id}/tools/read`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ args: { file_path: 'hello.txt' } }),
    })
    expect(((await read.json()) as { output: string }).output).toBe('     1\thello from disk')

    // A running bash command: SIGTERM must end its process group and the server, promptly.
    const pidFile = join(dir, 'sleep.pid')
    const running = fetch(`${url}/v1/sessions/${id}/tools/bash`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ args: { command: "sh -c 'echo $$ > sleep.pid; exec sleep 60'" } }),
    }).catch(() => undefined)
    const deadline = Date.now() + 10_000
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((r) => setTimeout(r, 25))
    }
    const sleeper = Number(readFileSync(pidFile, 'utf8'))
    expect(alive(sleeper)).toBe(true)

    const exited = new Promise<{ code: number | null; ms: number }>((resolve) => {
      const t0 = Date.now()
      child.once('exit', (code) => resolve({ code, ms: Date.now() - t0 }))
    })
    child.kill('SIGTERM')
    const { code, ms } = await exited
    expect(code).toBe(143)
    expect(ms).toBeLessThan(5000)
    await running
    const gone = Date.now() + 3000
    while (alive(sleeper) && Date.now() < gone) await new Promise((r) => setTimeout(r, 25))
    expect(alive(sleeper)).toBe(false)
  }, 60_000)

  it('refuses bad options with exit code 2', () => {
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [bin, 'serve', ...args], { encoding: 'utf8' })
    expect(run('--port', 'eighty').status).toBe(2)
    expect(run('--port', '70000').status).toBe(2)
    const missing = run('--workspace', join(dir, 'no-such-dir'))
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain('not a directory')
    const help = run('--help')
    expect(help.status).toBe(0)
    expect(help.stdout).toContain('isoagent serve [--workspace DIR | s3://bucket/prefix | memory]')
  })

  it('serves a memory workspace with the token it is given', async () => {
    const { child, out } = await startServe([
      '--workspace',
      'memory',
      '--port',
      '0',
      '--token',
      'given-token',
    ])
    try {
      const url = /open: +(http:\/\/127\.0\.0\.1:\d+)\/\?token=given-token/.exec(out())![1]!
      const created = await fetch(`${url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: 'Bearer given-token' },
      })
      expect(created.status).toBe(201)
      expect(((await created.json()) as { tools: string[] }).tools).not.toContain('bash')
    } finally {
      child.kill('SIGINT')
      expect(await new Promise((r) => child.once('exit', r))).toBe(130)
    }
  }, 30_000)
})
