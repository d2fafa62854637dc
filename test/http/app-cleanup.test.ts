// What the app releases when opening a session fails part-way.
import { describe, expect, it } from 'vitest'
import { memoryWorkspace, type WorkspaceServices } from '../../adapters/index.ts'
import { createApp } from '../../edge/app.ts'

describe('createApp cleanup', () => {
  it('closes the workspace it opened when the session over it cannot be created', async () => {
    let closed = 0
    const app = createApp({
      workspace: (): WorkspaceServices => {
        const ws = memoryWorkspace()
        return {
          ...ws,
          close: async () => {
            closed++
            await ws.close?.()
          },
        }
      },
      // Session options that the agent refuses: the workspace is already open by then.
      session: { permissions: { deny: ['read('] } },
    })
    const res = await app.fetch(new Request('http://x/v1/sessions', { method: 'POST', body: '{}' }))
    expect(res.status).toBeGreaterThanOrEqual(400)
    const body = (await res.json()) as { error: { code: string } }
    expect(body.error.code).toEqual(expect.any(String))
    expect(closed).toBe(1)
    expect(app.context.store.size).toBe(0)
    await app.close()
  })
})
