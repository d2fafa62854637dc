// Secrets never reach the event stream whole, however a tool's output is cut: bash output in
// chunks (a real process, a sleep between the halves), secrets across lines in `read`, and
// metadata nested past the sanitiser's depth.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { REDACTED, toolSuccess, type SessionEvent } from '../../adapters/index.ts'
import { localWorkspace } from '../../adapters/node/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { serve } from '../../edge/node.ts'
import { SseReader } from '../http/sse-client.ts'
import { OutputRedactor } from '../../src/kernel/output-redactor.ts'
import { Sanitizer } from '../../src/kernel/sanitize.ts'
import { cleanupHarnesses, harness, recordEvents, settle } from './helpers.ts'

afterEach(cleanupHarnesses)

const SECRET = 'hunter2-split-across-chunks'
const GITHUB = `ghp_${'a1B2c3D4e5'.repeat(4)}`

function deltas(events: SessionEvent[]): SessionEvent[] {
  return events.filter((e) => e.type === 'tool_output_delta')
}

function joined(events: SessionEvent[]): string {
  return deltas(events)
    .map((e) => (e.type === 'tool_output_delta' ? e.delta : ''))
    .join('')
}

describe('streamed output is redacted across chunks', () => {
  it('bash printing a secret in two chunks: the joined event stream never holds it', async () => {
    const h = await harness('local', {}, { redactSecrets: [SECRET] })
    const rec = recordEvents(h.session)
    const half = SECRET.length >> 1
    const command = [
      `printf 'first line\\n'`,
      'sleep 0.4',
      `printf '%s' 'key=${SECRET.slice(0, half)}'`,
      'sleep 0.4',
      `printf '%s\\n' '${SECRET.slice(half)} done'`,
      'sleep 0.4',
      `printf 'Authorization: Bea'`,
      'sleep 0.4',
      `printf 'rer ${GITHUB.slice(0, 10)}'`,
      'sleep 0.4',
      `printf '${GITHUB.slice(10)}\\n'`,
    ].join('; ')
    const r = await h.session.governedTool('bash', { command })
    await settle()
    rec.stop()
    expect(r.exitCode).toBe(0)
    const stream = joined(rec.events)
    // The chunks really were streamed apart (the test would catch a per-chunk redaction).
    expect(deltas(rec.events).length).toBeGreaterThanOrEqual(3)
    expect(stream).toContain('first line\n')
    expect(stream).not.toContain(SECRET)
    expect(stream).not.toContain(GITHUB)
    expect(stream).not.toContain(GITHUB.slice(10))
    expect(stream).toContain(`key=${REDACTED} done`)
    expect(r.output).not.toContain(SECRET)
  })

  it('over HTTP: the SSE frames of a secret printed in two chunks never hold it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'isoagent-sse-redact-'))
    const token = 'sse-redaction-token'
    const app = createApp({
      workspace: () => localWorkspace(root),
      token,
      session: { redactSecrets: [SECRET] },
    })
    const server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
    try {
      const auth = { authorization: `Bearer ${token}` }
      const created = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: auth })
      const { id } = (await created.json()) as { id: string }
      const events = new SseReader(
        await fetch(`${server.url}/v1/sessions/${id}/events`, { headers: auth }),
      )
      const half = 9
      const command = `printf '%s' '${SECRET.slice(0, half)}'; sleep 0.4; printf '%s\\n' '${SECRET.slice(half)}'`
      const result = await fetch(`${server.url}/v1/sessions/${id}/tools/bash`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ args: { command } }),
      })
      expect(((await result.json()) as { exitCode: number }).exitCode).toBe(0)
      const frames = await events.collect((f) => f.event === 'tool_end')
      await events.close()
      const stream = frames
        .filter((f) => f.event === 'tool_output_delta')
        .map((f) => (JSON.parse(f.data) as { delta: string }).delta)
        .join('')
      expect(stream).toBe(`${REDACTED}\n`)
    } finally {
      await server.close()
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('lets a finished line through before the call ends', async () => {
    const h = await harness('local', {}, { redactSecrets: [SECRET] })
    const rec = recordEvents(h.session)
    await h.session.governedTool('bash', { command: `printf 'early\\n'; sleep 1; echo late` })
    await settle()
    rec.stop()
    const early = rec.events.find(
      (e) => e.type === 'tool_output_delta' && e.delta.includes('early'),
    )
    const end = rec.events.find((e) => e.type === 'tool_end')
    expect(early).toBeDefined()
    expect(end!.timestamp - early!.timestamp).toBeGreaterThan(500)
  })

  it.each([
    ['one-line and multi-line secrets', [SECRET, 'multi\nline-secret']],
    ['one-line secrets', [SECRET]],
    ['credential patterns only', []],
  ])('any cut of a text gives the whole text redacted (%s)', (_, secrets) => {
    const sanitizer = new Sanitizer(secrets)
    const text =
      `a ${SECRET} b\nAuthorization: Bearer abcdefghijklmnopqrstuvwxyz\n` +
      `${GITHUB} tail\nmulti\nline-secret\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKC\n` +
      `-----END RSA PRIVATE KEY-----\nplain`
    const whole = sanitizer.text(text)
    for (let a = 0; a <= text.length; a++) {
      for (const b of [a, Math.min(text.length, a + 7), Math.min(text.length, a + 31)]) {
        const redactor = new OutputRedactor(sanitizer)
        const out =
          redactor.push(text.slice(0, a)) +
          redactor.push(text.slice(a, b)) +
          redactor.push(text.slice(b)) +
          redactor.flush()
        expect(out, `cut at ${a}/${b}`).toBe(whole)
      }
    }
  })
})

describe('secrets across lines and deep metadata', () => {
  it('read: a secret spanning two lines is redacted despite the line numbers', async () => {
    const secret = 'first-half-of-the-key\nsecond-half-of-the-key'
    const h = await harness(
      'local',
      { 'key.txt': `before\n${secret}\nafter\n` },
      { redactSecrets: [secret] },
    )
    const r = await h.session.governedTool('read', { file_path: 'key.txt' })
    expect(r.exitCode).toBe(0)
    expect(r.output).toContain('before')
    expect(r.output).toContain('after')
    expect(r.output).not.toContain('first-half-of-the-key')
    expect(r.output).not.toContain('second-half-of-the-key')
    expect(r.output).toContain(REDACTED)
  })

  it('metadata nested 100 levels deep is cut, not passed on unsanitised', async () => {
    let nested: Record<string, unknown> = { token: SECRET }
    for (let i = 0; i < 100; i++) nested = { level: i, inner: nested }
    const h = await harness(
      'memory',
      {},
      {
        redactSecrets: [SECRET],
        tools: [
          {
            name: 'deep',
            description: 'returns deep metadata',
            parameters: { type: 'object', additionalProperties: false, properties: {} },
            run: () => toolSuccess('deep', 'ok', { nested }),
          },
        ],
      },
    )
    const rec = recordEvents(h.session)
    const r = await h.session.governedTool('deep', {})
    await settle()
    rec.stop()
    expect(r.exitCode).toBe(0)
    expect(JSON.stringify(r)).not.toContain(SECRET)
    expect(JSON.stringify(r.metadata)).toContain('[cut: nested deeper than 64 levels]')
    expect(JSON.stringify(rec.events)).not.toContain(SECRET)
    const sanitizer = new Sanitizer([SECRET])
    expect(JSON.stringify(sanitizer.value(nested))).not.toContain(SECRET)
  })
})
