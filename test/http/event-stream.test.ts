import { describe, expect, it } from 'vitest'
import { Agent, memoryWorkspace } from '../../adapters/index.ts'
import { eventStream, SSE_QUEUE_EVENTS } from '../../edge/http/event-stream.ts'
import { HostedSession } from '../../edge/http/hosted-session.ts'

async function readFrames(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const next = await Promise.race([
      reader.read(),
      new Promise<undefined>((r) => setTimeout(r, 50)),
    ])
    if (next === undefined || next.done) break
    text += decoder.decode(next.value, { stream: true })
  }
  await reader.cancel()
  return text.split('\n\n').filter((f) => f.startsWith('event: '))
}

describe('event stream of a slow client', () => {
  it('counts every event it drops over several overflows, in one events_dropped notice', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'a\n' }))
    const hosted = new HostedSession('s', session, { maxEvents: 4096 })
    for (let i = 0; i < 10; i++) await session.tool('read', { file_path: 'a.txt' })
    await new Promise((r) => setTimeout(r, 10))
    const replayed = hosted.lastSeq
    expect(replayed).toBeGreaterThan(10)
    const abort = new AbortController()
    const body = eventStream(hosted, 0, abort.signal)
    while (hosted.lastSeq < replayed + 2 * SSE_QUEUE_EVENTS + 200)
      await session.tool('read', { file_path: 'a.txt' })
    await new Promise((r) => setTimeout(r, 10))
    const live = hosted.lastSeq - replayed
    const frames = await readFrames(body)
    const notices = frames.filter((f) => f.startsWith('event: events_dropped'))
    const events = frames.filter((f) => !f.startsWith('event: events_dropped'))
    const droppedCount = notices
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { count: number })
      .reduce((sum, n) => sum + n.count, 0)
    expect(notices.length).toBe(1)
    expect(events.length).toBeLessThanOrEqual(SSE_QUEUE_EVENTS)
    expect(droppedCount + events.length).toBe(replayed + live)
    const ids = events.map((f) => Number(/\nid: (\d+)/.exec(f)![1]))
    expect(ids.at(-1)).toBe(replayed + live)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    abort.abort()
    await hosted.close()
  })

  it('keeps the count of events the history no longer held when it overflows later', async () => {
    const session = await Agent.create().session(memoryWorkspace({ 'a.txt': 'a\n' }))
    const hosted = new HostedSession('s', session, { maxEvents: 10 })
    for (let i = 0; i < 15; i++) await session.tool('read', { file_path: 'a.txt' })
    await new Promise((r) => setTimeout(r, 10))
    const before = hosted.lastSeq
    const abort = new AbortController()
    const body = eventStream(hosted, 0, abort.signal)
    while (hosted.lastSeq < before + SSE_QUEUE_EVENTS + 2)
      await session.tool('read', { file_path: 'a.txt' })
    await new Promise((r) => setTimeout(r, 10))
    const live = hosted.lastSeq - before
    const frames = await readFrames(body)
    const notices = frames.filter((f) => f.startsWith('event: events_dropped'))
    const events = frames.length - notices.length
    const droppedCount = notices
      .map((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as { count: number })
      .reduce((sum, n) => sum + n.count, 0)
    expect(droppedCount + events).toBe(before + live)
    abort.abort()
    await hosted.close()
  })
})
