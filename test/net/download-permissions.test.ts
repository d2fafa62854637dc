// `download` into a folder: the permission rules decide on the final path, once the server has
// named the file, before any byte is written (a real loopback server, a real local folder).
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Agent, type Session, type SessionEvent } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import type { PermissionRules } from '../../src/kernel/permissions.ts'
import { startServer, type TestServer } from './http-fixture.ts'

let server: TestServer
let root: string
let session: Session | undefined

function files(dir = root, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  )
}

async function open(permissions: PermissionRules, confirmationTimeoutMs?: number) {
  session = await Agent.create().session(localWorkspace(root), {
    net: { allowHosts: ['127.0.0.1'] },
    permissions,
    ...(confirmationTimeoutMs !== undefined ? { confirmationTimeoutMs } : {}),
  })
  return session
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(check()).toBe(true)
}

beforeAll(async () => {
  server = await startServer()
  // A server naming its file itself, with and without range support.
  server.route('/script', (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="evil.sh"',
      'content-length': '20',
    })
    res.end('#!/bin/sh\necho owned\n'.slice(0, 20))
  })
  server.route('/ranged', (req, res) => {
    const body = 'echo ranged and named\n'
    const headers = {
      'content-type': 'application/octet-stream',
      'content-disposition': "attachment; filename*=UTF-8''run.sh",
      etag: '"v1"',
      'accept-ranges': 'bytes',
    }
    if (req.headers.range === 'bytes=0-0') {
      res.writeHead(206, {
        ...headers,
        'content-range': `bytes 0-0/${body.length}`,
        'content-length': '1',
      })
      res.end(body.slice(0, 1))
      return
    }
    res.writeHead(200, { ...headers, 'content-length': String(body.length) })
    res.end(body)
  })
  server.route('/notes', (_req, res) => {
    res.writeHead(200, {
      'content-type': 'text/plain',
      'content-disposition': 'attachment; filename="notes.txt"',
    })
    res.end('plain notes\n')
  })
})
afterAll(() => server.close())
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'isoagent-download-perm-'))
})
afterEach(async () => {
  await session?.close()
  session = undefined
  rmSync(root, { recursive: true, force: true })
})

describe('download: permission rules on the final path', () => {
  for (const route of ['/script', '/ranged']) {
    it(`a deny rule on the server-given name refuses before any byte (${route})`, async () => {
      const s = await open({ deny: ['download(**/*.sh)'] })
      const events: SessionEvent[] = []
      const stop = new AbortController()
      const seen = (async () => {
        for await (const e of s.events({ signal: stop.signal })) events.push(e)
      })().catch(() => undefined)
      const r = await s.governedTool('download', { url: server.url(route), file_path: 'bin/' })
      stop.abort()
      await seen
      expect(r.exitCode).toBe(1)
      expect(r.errorKind?.type).toBe('permission_denied')
      expect(r.output).toContain('download(**/*.sh)')
      expect(files()).toEqual([])
      expect(existsSync(join(root, 'bin'))).toBe(false)
      expect(events.some((e) => e.type === 'permission_denied')).toBe(true)
    })
  }

  it('the same rule lets another name through', async () => {
    const s = await open({ deny: ['download(**/*.sh)'] })
    const r = await s.governedTool('download', { url: server.url('/notes'), file_path: 'docs/' })
    expect(r.exitCode).toBe(0)
    expect(files()).toEqual(['docs/notes.txt'])
  })

  it('an ask rule asks again with the final path, and a refusal writes nothing', async () => {
    const s = await open({ ask: ['download(bin/*.sh)'] })
    const call = s.governedTool('download', { url: server.url('/script'), file_path: 'bin/' })
    await until(() => s.pendingConfirmations().length === 1)
    const [pending] = s.pendingConfirmations()
    expect(pending).toMatchObject({ toolName: 'download', args: { file_path: 'bin/evil.sh' } })
    s.confirmToolUse(pending!.id, false)
    const r = await call
    expect(r.exitCode).toBe(1)
    expect(r.errorKind?.type).toBe('permission_denied')
    expect(files()).toEqual([])
  })

  it('an approved ask downloads to the final path', async () => {
    const s = await open({ ask: ['download(bin/*.sh)'] })
    const call = s.governedTool('download', { url: server.url('/script'), file_path: 'bin/' })
    await until(() => s.pendingConfirmations().length === 1)
    s.confirmToolUse(s.pendingConfirmations()[0]!.id, true)
    const r = await call
    expect(r.exitCode).toBe(0)
    expect(files()).toEqual(['bin/evil.sh'])
  })

  it('an unanswered ask times out as refused, nothing written', async () => {
    const s = await open({ ask: ['download(**/*.sh)'] }, 100)
    const r = await s.governedTool('download', { url: server.url('/script'), file_path: 'bin/' })
    expect(r.errorKind?.type).toBe('permission_denied')
    expect(files()).toEqual([])
  })

  it('host-direct calls are not governed, as at admission', async () => {
    const s = await open({ deny: ['download(**/*.sh)'] })
    const r = await s.tool('download', { url: server.url('/script'), file_path: 'bin/' })
    expect(r.exitCode).toBe(0)
    expect(files()).toEqual(['bin/evil.sh'])
  })
})
