// What the app releases when opening a session fails part-way.
import { describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace, type WorkspaceServices } from '../../adapters/index.ts'
import { createApp } from '../../edge/http/app.ts'
import { memorySessionStore } from '../../edge/http/session-store.ts'

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
    const res = await app.fetch(
      new Request('http://127.0.0.1/v1/sessions', { method: 'POST', body: '{}' }),
    )
    expect(res.status).toBeGreaterThanOrEqual(400)
    const body = (await res.json()) as { error: { code: string } }
    expect(body.error.code).toEqual(expect.any(String))
    expect(closed).toBe(1)
    expect(app.context.store.size).toBe(0)
    await app.close()
  })
})

describe('memorySessionStore shutdown', () => {
  it('closes a session that was still opening when closeAll() ran, and refuses it', async () => {
    const store = memorySessionStore()
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const session = await Agent.create().session(memoryWorkspace())
    let sessionClosed = false
    const close = session.close.bind(session)
    session.close = async () => {
      sessionClosed = true
      await close()
    }
    const creating = store.create(async () => {
      await gate
      return session
    })
    const closing = store.closeAll()
    release()
    await expect(creating).rejects.toMatchObject({ status: 503, code: 'shutting_down' })
    await closing
    expect(sessionClosed).toBe(true)
    expect(store.size).toBe(0)
    await expect(store.create(async () => session)).rejects.toMatchObject({ status: 503 })
  })
})
