// Issue 28: what third-party OpenAPI tools need of GET /v1/openapi.json (servers, license, typed
// metadata, optional tool-call bodies as the server accepts them, docs naming the same paths).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'

const docsHttp = readFileSync(new URL('../../docs/http.md', import.meta.url), 'utf8')

interface Doc {
  info: { license?: { name: string; identifier?: string } }
  servers?: { url: string }[]
  paths: Record<string, Record<string, { requestBody?: { required: boolean } }>>
  components: { schemas: { ToolResult: { properties: { metadata: Record<string, unknown> } } } }
}

describe('the OpenAPI document', () => {
  const app = createApp({ workspace: () => memoryWorkspace({ 'a.txt': 'a\n' }) })
  const doc = async () =>
    (await (await app.request('http://127.0.0.1:8787/v1/openapi.json')).json()) as Doc

  it('names a server and a license', async () => {
    const d = await doc()
    expect(d.servers).toEqual([{ url: 'http://127.0.0.1:8787', description: 'this server' }])
    expect(d.info.license).toEqual({ name: 'MIT', identifier: 'MIT' })
  })

  it('types ToolResult.metadata as an open object, so generated clients can read its fields', async () => {
    const metadata = (await doc()).components.schemas.ToolResult.properties.metadata
    expect(metadata.type).toBe('object')
    expect(metadata.additionalProperties).toBe(true)
  })

  it('marks tool-call bodies optional, as the server accepts an empty one', async () => {
    const d = await doc()
    expect(d.paths['/v1/sessions/{id}/tools/ls']!.post!.requestBody!.required).toBe(false)
    expect(d.paths['/v1/sessions/{id}/tools/{name}']!.post!.requestBody!.required).toBe(false)
    const created = await app.request('/v1/sessions', { method: 'POST' })
    const { id } = (await created.json()) as { id: string }
    const empty = await app.request(`/v1/sessions/${id}/tools/ls`, { method: 'POST' })
    expect(empty.status).toBe(200)
    expect(((await empty.json()) as { exitCode: number }).exitCode).toBe(0)
    await app.close()
  })

  it('has the confirmation path docs/http.md names', async () => {
    const d = await doc()
    expect(d.paths['/v1/sessions/{id}/confirmations/{callId}']?.post).toBeDefined()
    expect(docsHttp).toContain('/v1/sessions/{id}/confirmations/{callId}')
    expect(docsHttp).not.toContain('confirmations/{key}')
  })
})
