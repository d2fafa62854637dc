// The workflow routes of a server whose sessions have no dynamic_workflow (the shared HTTP suite
// in test/http/workflow-cases.ts covers servers with it, on Node and in workerd).
import { expect, it } from 'vitest'
import { memoryWorkspace } from '../../adapters/index.ts'
import { createApp } from '../../edge/index.ts'

it('answers 404 workflows_not_configured when sessions have no dynamic_workflow', async () => {
  const app = createApp({ workspace: () => memoryWorkspace({}) })
  const created = await app.request('/v1/sessions', { method: 'POST', body: '{}' })
  const { id } = (await created.json()) as { id: string }
  for (const [method, rest] of [
    ['GET', ''],
    ['GET', '/history'],
    ['POST', '/cancel'],
    ['POST', '/drive'],
  ] as const) {
    const res = await app.request(`/v1/sessions/${id}/workflows/r1${rest}`, { method })
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ error: { code: 'workflows_not_configured' } })
  }
  await app.close()
})
