import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { alive, meta, newRoot, open, pidsIn, timed, useBashFixtures } from './bash-helpers.ts'

useBashFixtures()

describe('bash: process groups, deadlines and cancellation', () => {
  it('kills the whole process group at the deadline: child, grandchild, all gone', async () => {
    const { session } = await open()
    const { value: r, ms } = await timed(() =>
      session.tool('bash', {
        command:
          'sh -c \'sleep 60 & echo "pid=$!"; wait\' & echo "pid=$!"; sleep 60 & echo "pid=$!"; wait',
        timeout: 1500,
      }),
    )
    expect(ms).toBeGreaterThanOrEqual(1400)
    // sleep honours SIGTERM: no KILL grace needed, everything is gone right after the deadline.
    expect(ms).toBeLessThan(1500 + 1000)
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toEqual({ type: 'timeout', op: 'bash', duration_ms: 1500 })
    const m = meta(r)
    expect(m.output.timed_out).toBe(true)
    expect(m.survivors).toBe(0)
    expect(r.output).toContain('[bash: timed out after 1500 ms; process group killed]')
    const pids = pidsIn(r.output)
    expect(pids).toHaveLength(3)
    for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false)
  })

  it('bounds the drain: a background job holding the pipes after bash exits is killed at the deadline', async () => {
    const { session } = await open()
    const { value: r, ms } = await timed(() =>
      session.tool('bash', { command: 'sleep 60 & echo "pid=$!"', timeout: 1200 }),
    )
    expect(ms).toBeLessThan(1200 + 2500)
    const m = meta(r)
    expect(m.output.timed_out).toBe(true)
    expect(m.pipes_held_open).toBe(true)
    expect(m.exit_code).toBe(0)
    expect(r.output).toContain('a process it left behind held its output open')
    for (const pid of pidsIn(r.output)) expect(alive(pid)).toBe(false)
  })

  it('kills background jobs with their own output once the command is done', async () => {
    const { session } = await open()
    const { value: r, ms } = await timed(() =>
      session.tool('bash', {
        command: 'nohup sleep 60 >/dev/null 2>&1 & echo "pid=$!"',
        timeout: 10_000,
      }),
    )
    expect(ms).toBeLessThan(3000)
    expect(r.exitCode).toBe(0)
    expect(meta(r)).toMatchObject({ background_killed: true, survivors: 0 })
    const [pid] = pidsIn(r.output)
    expect(alive(pid!)).toBe(false)
  })

  it('ends a command that closes its output early and keeps running, at the deadline', async () => {
    const { session } = await open()
    const { value: r, ms } = await timed(() =>
      session.tool('bash', { command: 'echo "pid=$$"; exec >&- 2>&-; sleep 60', timeout: 1200 }),
    )
    expect(ms).toBeLessThan(1200 + 2500)
    expect(meta(r).output.timed_out).toBe(true)
    expect(meta(r).pipes_held_open).toBe(false)
    for (const pid of pidsIn(r.output)) expect(alive(pid)).toBe(false)
  })

  it('kills a few hundred background processes at the deadline (a bounded fork storm)', async () => {
    const { session } = await open()
    const { value: r, ms } = await timed(() =>
      session.tool('bash', {
        command: 'for i in $(seq 300); do sleep 60 & echo "pid=$!"; done; wait',
        timeout: 4000,
      }),
    )
    expect(ms).toBeLessThan(4000 + 2500)
    expect(meta(r).output.timed_out).toBe(true)
    // However many the machine started before the deadline (a busy machine forks slowly).
    const pids = pidsIn(r.output)
    expect(pids.length).toBeGreaterThanOrEqual(100)
    expect(meta(r).survivors).toBe(0)
    expect(pids.filter(alive)).toEqual([])
  })

  it('leaks no pipes: the host process holds no more descriptors after the calls', async () => {
    const { session } = await open()
    const fds = () => readdirSync('/proc/self/fd').length
    await session.bash('true')
    const before = fds()
    for (const command of [
      'echo hi',
      'sleep 60 & echo bg',
      'nohup sleep 60 >/dev/null 2>&1 &',
      'exec >&-; sleep 60',
      'yes | head -c 10M',
      // Leaves the group (so it is not killed) and holds the pipes for 5 s: they are cut off.
      'setsid sleep 5 &',
    ])
      await session.tool('bash', { command, timeout: 1000 })
    expect(fds()).toBeLessThanOrEqual(before)
  })

  it('kills running commands when the host process exits', async () => {
    const root = newRoot()
    const entry = fileURLToPath(new URL('../../adapters/node/index.ts', import.meta.url))
    const main = fileURLToPath(new URL('../../adapters/index.ts', import.meta.url))
    const script = join(root, 'host.mts')
    writeFileSync(
      script,
      `import { Agent } from ${JSON.stringify(main)}
import { localWorkspace } from ${JSON.stringify(entry)}
import { existsSync } from 'node:fs'
const session = await Agent.create().session(localWorkspace(${JSON.stringify(root)}))
void session.tool('bash', { command: 'sleep 60 & echo $! > pid.txt; wait' })
while (!existsSync(${JSON.stringify(join(root, 'pid.txt'))})) await new Promise((r) => setTimeout(r, 20))
await new Promise((r) => setTimeout(r, 50))
process.exit(0)
`,
    )
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(run.status, run.stderr).toBe(0)
    const pid = Number(readFileSync(join(root, 'pid.txt'), 'utf8'))
    expect(pid).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 100))
    expect(alive(pid)).toBe(false)
  })

  it('applies shellMaxProcesses as ulimit -u', async () => {
    const { session } = await open({}, {}, { shellMaxProcesses: 4321 })
    expect(await session.bash('ulimit -u')).toBe('4321\n')
  })

  it('cancels through an AbortSignal and kills the group', async () => {
    const { session } = await open()
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 400)
    const { value: r, ms } = await timed(() =>
      session.tool(
        'bash',
        { command: 'sleep 60 & echo "pid=$!"; sleep 60 & echo "pid=$!"; wait' },
        { signal: controller.signal },
      ),
    )
    expect(ms).toBeLessThan(400 + 2500)
    expect(r.exitCode).toBe(1)
    expect(r.errorKind).toEqual({ type: 'cancelled', op: 'bash' })
    expect(meta(r).cancelled).toBe(true)
    expect(r.output).toContain('[bash: cancelled; process group killed]')
    // The helper throws typed errors for cancellation and the deadline.
    await expect(
      session.bash('sleep 60', { signal: AbortSignal.timeout(200) }),
    ).rejects.toMatchObject({ code: 'cancelled' })
    await expect(session.bash('sleep 60', { timeout: 1000 })).rejects.toMatchObject({
      code: 'timeout',
      data: { errorKind: { type: 'timeout', op: 'bash', duration_ms: 1000 } },
    })
    const pids = pidsIn(r.output)
    expect(pids).toHaveLength(2)
    for (const pid of pids) expect(alive(pid)).toBe(false)
  })

  it('cancels on session.close() and kills the group', async () => {
    const { session } = await open()
    const events = session.events()
    const call = session.tool('bash', { command: 'sleep 60 & echo "pid=$!"; wait' })
    let pid: number | undefined
    for await (const e of events) {
      if (e.type === 'tool_output_delta') {
        pid = pidsIn(e.delta)[0]
        if (pid !== undefined) break
      }
    }
    expect(alive(pid!)).toBe(true)
    const { value: r, ms } = await timed(async () => {
      await session.close()
      return call
    })
    expect(ms).toBeLessThan(2500)
    expect(r.errorKind?.type).toBe('cancelled')
    expect(alive(pid!)).toBe(false)
  })

  it("lets the tool's own deadline fire before the kernel's, even when the kernel's is shorter", async () => {
    const { session } = await open({}, { toolTimeoutMs: { bash: 1000 } })
    const { value: r, ms } = await timed(() =>
      session.tool('bash', { command: 'echo "pid=$$"; sleep 60', timeout: 2500 }),
    )
    expect(ms).toBeGreaterThanOrEqual(2400)
    expect(r.errorKind).toEqual({ type: 'timeout', op: 'bash', duration_ms: 2500 })
    expect(meta(r).output.timed_out).toBe(true)
    expect(meta(r).timeout_ms).toBe(2500)
    for (const pid of pidsIn(r.output)) expect(alive(pid)).toBe(false)
    // A large timeout is accepted and a quick command returns at once.
    expect((await session.tool('bash', { command: 'true', timeout: 86_400_000 })).exitCode).toBe(0)
  })
})
