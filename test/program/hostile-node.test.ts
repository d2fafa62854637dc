// Guests that never yield cannot freeze a Node host: QuickJS built-ins that loop in C never reach
// the interrupt handler, so on Node each guest runs in a worker thread that is terminated at its
// deadline. Shown over a real HTTP server on loopback (edge/node `serve`): the four calls of the
// hostile trial each end as a typed `timeout` while the host's timers keep ticking and
// `GET /v1/health` keeps answering; then 200 such programs in a row leave lag and RSS flat.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { nodeProgramRunner } from '../../adapters/node/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve, type ServerHandle } from '../../edge/node.ts'
import { HOSTILE } from './hostile-cases.ts'

/** Delays of a 20 ms `setInterval` past its period while `body` runs: the largest and the p99. */
async function lagDuring<T>(
  body: () => Promise<T>,
): Promise<{ value: T; lagMs: number; p99Ms: number }> {
  let last = performance.now()
  const lags: number[] = [0]
  const timer = setInterval(() => {
    const now = performance.now()
    lags.push(now - last - 20)
    last = now
  }, 20)
  try {
    const value = await body()
    lags.sort((a, b) => a - b)
    return { value, lagMs: lags.at(-1)!, p99Ms: lags[Math.floor((lags.length - 1) * 0.99)]! }
  } finally {
    clearInterval(timer)
  }
}

function gc(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

interface ToolReply {
  exitCode: number
  output: string
  errorKind?: { type: string }
}

describe('hostile programs on Node: the host stays responsive', () => {
  let server: ServerHandle
  let session = ''

  const program = async (source: string, timeoutMs: number): Promise<ToolReply> => {
    const response = await fetch(`${server.url}/v1/sessions/${session}/tools/program`, {
      method: 'POST',
      body: JSON.stringify({ args: { source, limits: { timeoutMs } } }),
    })
    expect(response.status).toBe(200)
    return (await response.json()) as ToolReply
  }

  beforeAll(async () => {
    const app = createApp({ workspace: () => memoryWorkspace({ 'a.txt': 'alpha\n' }) })
    server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    const created = await fetch(`${server.url}/v1/sessions`, { method: 'POST' })
    session = ((await created.json()) as { id: string }).id
    await nodeProgramRunner.prewarm()
    // Warm the client and the route once (the first fetch of a process compiles undici).
    expect((await fetch(`${server.url}/v1/health`)).status).toBe(200)
    expect((await program('return 1', 30_000)).output).toBe('1')
  }, 60_000)

  afterAll(async () => {
    await server?.close()
  })

  /** `GET /v1/health` every 100 ms until `done`; the slowest answer, and how many came. */
  const healthWhile = async (done: Promise<unknown>) => {
    let finished = false
    void done.finally(() => (finished = true))
    let slowestMs = 0
    let answered = 0
    while (!finished) {
      const started = performance.now()
      const response = await fetch(`${server.url}/v1/health`)
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ ok: true })
      slowestMs = Math.max(slowestMs, performance.now() - started)
      answered++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return { slowestMs, answered }
  }

  for (const source of HOSTILE) {
    it(`${source}: a typed timeout at 1000 ms, timers ticking, health answering`, async () => {
      const started = performance.now()
      const { value, lagMs } = await lagDuring(async () => {
        const call = program(source, 1000)
        const health = await healthWhile(call)
        return { reply: await call, health }
      })
      const elapsed = performance.now() - started
      expect(value.reply.exitCode).toBe(1)
      expect(value.reply.errorKind?.type).toBe('timeout')
      expect(elapsed).toBeGreaterThanOrEqual(900)
      expect(elapsed).toBeLessThan(5_000)
      expect(lagMs, 'event-loop lag').toBeLessThan(250)
      expect(value.health.answered).toBeGreaterThanOrEqual(3)
      expect(value.health.slowestMs, 'slowest health answer').toBeLessThan(1_000)
    }, 60_000)
  }

  it('the worker after a terminated one runs the next program normally', async () => {
    const reply = await program("const t = await ctx.readFile('a.txt'); return t", 10_000)
    expect(reply.exitCode).toBe(0)
    expect(reply.output).toBe('     1\talpha')
  }, 60_000)

  it('200 hostile programs in a row leave event-loop lag and RSS flat', async () => {
    const round = (n: number) =>
      lagDuring(async () => {
        for (let i = 0; i < n; i++) {
          const reply = await program(HOSTILE[i % HOSTILE.length]!, 50)
          expect(reply.errorKind?.type).toBe('timeout')
        }
      })
    await round(20)
    gc()
    const before = process.memoryUsage().rss
    const { lagMs, p99Ms } = await round(180)
    gc()
    const grew = process.memoryUsage().rss - before
    // 180 kills and respawns, each new thread competing for the cores: the p99 stays under the
    // 250 ms bound and no single tick waits a second (a frozen loop would wait minutes).
    expect(p99Ms, 'event-loop lag p99').toBeLessThan(250)
    expect(lagMs, 'event-loop lag, largest').toBeLessThan(1_000)
    expect(grew, `RSS grew ${grew} bytes`).toBeLessThan(96 * 1024 * 1024)
    const stats = nodeProgramRunner.stats()
    expect(stats.busy).toBe(0)
    expect(stats.idle).toBeLessThanOrEqual(2)
    // Most were stopped by terminating their thread; under load a guest may reach its 50 ms
    // deadline before it enters the native loop, and is then stopped (typed) by its own worker.
    expect(stats.terminated).toBeGreaterThanOrEqual(150)
    // Still a working runner afterwards.
    const reply = await program('return 6 * 7', 10_000)
    expect(reply.output).toBe('42')
  }, 600_000)
})

const root = fileURLToPath(new URL('../..', import.meta.url))

/** Run `script` as an ES module in a fresh Node process at the package root; its stdout. */
function node(script: string, args: string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ISOAGENT_TOKEN: '' },
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
}

// The built package, by name: which entry a Node process imports does not decide where guests run.
describe('the runtime decides, not the import (built package)', () => {
  const script = `
    const { Agent, memoryWorkspace } = await import(process.argv[1])
    const session = await Agent.create().session(memoryWorkspace())
    const started = performance.now()
    const r = await session.program({ source: ${JSON.stringify(HOSTILE[0])}, limits: { timeoutMs: 1000 } })
    console.log(JSON.stringify({ ms: performance.now() - started, errorKind: r.errorKind }))
    await session.close()`
  for (const entry of ['isoagent', 'isoagent/edge', 'isoagent/s3']) {
    it(`importing only ${entry}: a typed timeout, and the process exits by itself`, async () => {
      const { code, out } = await node(script, [entry])
      expect(code, out).toBe(0)
      const reply = JSON.parse(out.trim().split('\n').pop()!) as {
        ms: number
        errorKind?: { type: string }
      }
      expect(reply.errorKind?.type).toBe('timeout')
      expect(reply.ms).toBeLessThan(5_000)
    }, 90_000)
  }

  it('isoagent serve (the CLI bundle): a hostile program times out while health answers', async () => {
    const child = spawn(
      process.execPath,
      [join(root, 'bin/isoagent.mjs'), 'serve', '--port', '0'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ISOAGENT_TOKEN: 'hostile-test-token' },
      },
    )
    try {
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', (d: Buffer) => (out += d.toString()))
      const deadline = Date.now() + 30_000
      while (!/http:\/\/127\.0\.0\.1:\d+/.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(out)
        await new Promise((r) => setTimeout(r, 50))
      }
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)![0]
      const headers = { authorization: 'Bearer hostile-test-token' }
      const created = await fetch(`${url}/v1/sessions`, { method: 'POST', headers })
      const { id } = (await created.json()) as { id: string }
      const call = fetch(`${url}/v1/sessions/${id}/tools/program`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ args: { source: HOSTILE[3], limits: { timeoutMs: 1000 } } }),
      })
      let settled = false
      void call.finally(() => (settled = true))
      let answered = 0
      let slowest = 0
      while (!settled) {
        const started = performance.now()
        expect((await fetch(`${url}/v1/health`)).status).toBe(200)
        slowest = Math.max(slowest, performance.now() - started)
        answered++
        await new Promise((r) => setTimeout(r, 100))
      }
      const reply = (await (await call).json()) as ToolReply
      expect(reply.errorKind?.type).toBe('timeout')
      expect(answered).toBeGreaterThanOrEqual(3)
      expect(slowest).toBeLessThan(1_000)
    } finally {
      child.kill('SIGTERM')
    }
  }, 90_000)
})
