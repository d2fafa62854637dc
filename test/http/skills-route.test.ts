// `GET /v1/sessions/:id/skills` on a real server over a memory workspace holding skills.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'
import { serve } from '../../edge/node.ts'

const TOKEN = 'test-token-skills-0123456789'
const auth = { authorization: `Bearer ${TOKEN}` }

const files = {
  '.agents/skills/pdf-tools/SKILL.md':
    '---\nname: pdf-tools\ndescription: Fill and merge PDF forms\nallowed-tools: [Read, "Bash(uv run *)"]\ntags: [pdf]\n---\n\nUse the scripts.\n',
  '.agents/skills/pdf-tools/scripts/fill.py': 'print("fill")\n',
  '.claude/skills/broken/SKILL.md': '---\nname: [not, a, string]\n---\nbody\n',
}

let server: { url: string; close(): Promise<void> }

beforeAll(async () => {
  const shared = memoryWorkspace(files)
  const app = createApp({ workspace: () => shared, token: TOKEN })
  server = await serve(app, { port: 0, hostname: '127.0.0.1', handleSignals: false })
})
afterAll(() => server.close())

async function open(): Promise<string> {
  const res = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: auth })
  expect(res.status).toBe(201)
  return ((await res.json()) as { id: string }).id
}

describe('GET /v1/sessions/:id/skills', () => {
  it("answers the session's skills and the files skipped", async () => {
    const id = await open()
    const res = await fetch(`${server.url}/v1/sessions/${id}/skills`, { headers: auth })
    expect(res.status).toBe(200)
    const body = (await res.json()) as {
      skills: Record<string, unknown>[]
      diagnostics: { path: string; message: string }[]
    }
    expect(body.skills).toEqual([
      {
        name: 'pdf-tools',
        description: 'Fill and merge PDF forms',
        kind: 'instruction',
        tags: ['pdf'],
        allowed_tools: ['Read', 'Bash(uv run *)'],
        disable_model_invocation: false,
        source: { kind: 'workspace', path: '.agents/skills/pdf-tools/SKILL.md' },
      },
    ])
    expect(body.diagnostics.map((d) => d.path)).toEqual(['.claude/skills/broken/SKILL.md'])
    expect(JSON.stringify(body)).not.toContain('Use the scripts')
  })

  it('answers 404 JSON for an unknown session and 401 without the token', async () => {
    const missing = await fetch(`${server.url}/v1/sessions/no-such-session/skills`, {
      headers: auth,
    })
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(
      'session_not_found',
    )
    const id = await open()
    const anonymous = await fetch(`${server.url}/v1/sessions/${id}/skills`)
    expect(anonymous.status).toBe(401)
    await anonymous.body?.cancel()
  })

  it('is in the OpenAPI document', async () => {
    const res = await fetch(`${server.url}/v1/openapi.json`, { headers: auth })
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> }
    const op = doc.paths['/v1/sessions/{id}/skills']?.get as
      { operationId: string; responses: Record<string, unknown> } | undefined
    expect(op?.operationId).toBe('listSkills')
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['200', '404']))
  })
})
