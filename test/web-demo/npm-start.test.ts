// `npm start` as a new user runs it (after the build): bin/start.mjs serves a git copy of
// examples/sample-project with the demo, asks before `rm` and refuses writes under secrets/, and
// removes its copy when stopped; its sessions offer dynamic_workflow.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const start = new URL('../../bin/start.mjs', import.meta.url)
let child: ChildProcess
let base: string
let token: string
let copy: string
let printed = ''

beforeAll(async () => {
  child = spawn(process.execPath, [start.pathname, '--port', '0'], {
    env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', ISOAGENT_MODEL_PROVIDER: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${printed}`)), 60_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      printed += chunk.toString()
      const open = /open:\s+(http:\/\/[^/\s]+)\/\?token=([\w-]+)/.exec(printed)
      const dir = /a copy of examples\/sample-project in (\S+)/.exec(printed)
      if (open && dir) {
        clearTimeout(timer)
        ;[, base, token] = open as unknown as [string, string, string]
        copy = dir[1]!
        resolve()
      }
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${printed}`)))
  })
}, 90_000)

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
  }
})

const api = async (path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

describe('npm start', () => {
  let id: string
  let tools: string[]
  beforeAll(async () => {
    const created = (await api('/v1/sessions', {})).json
    id = created.id as string
    tools = created.tools as string[]
  })

  it('offers dynamic_workflow (the demo workflows panel runs on the server)', () => {
    expect(tools).toContain('dynamic_workflow')
    expect(tools).toContain('bash')
  })

  it('serves the demo page and the sample project as a clean git repository', async () => {
    const page = await fetch(`${base}/`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<script')
    const ls = await api(`/v1/sessions/${id}/tools/ls`, { args: { path: '.' } })
    expect(ls.json.exitCode).toBe(0)
    expect(ls.json.output).toMatch(/README\.md/)
    const status = await api(`/v1/sessions/${id}/tools/git`, { args: { command: 'status' } })
    expect(status.json.exitCode).toBe(0)
    const log = await api(`/v1/sessions/${id}/tools/git`, { args: { command: 'log' } })
    expect(log.json.output).toContain('sample project')
  })

  it('refuses a write under secrets/ and leaves nothing behind', async () => {
    const r = await api(`/v1/sessions/${id}/tools/write`, {
      args: { file_path: 'secrets/x.txt', content: 'no' },
    })
    expect(r.json.exitCode).toBe(1)
    expect((r.json.errorKind as { type: string }).type).toBe('permission_denied')
    expect(existsSync(`${copy}/secrets/x.txt`)).toBe(false)
  })

  it('removes its copy of the sample when stopped', async () => {
    expect(existsSync(copy)).toBe(true)
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
    expect(existsSync(copy)).toBe(false)
  })
})
