// watchedFetch: the response stream of a request that ends (or breaks) unanswered and not
// resumable is reported; an answered, resumable or cancelled one is not; chunk boundaries and
// large events (a 5 MiB result line) do not matter.
import { describe, expect, it } from 'vitest'
import { watchedFetch } from '../../src/mcp-client/watched-transport.ts'

const enc = new TextEncoder()
const REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} })

/** A fetch answering with `text` as an event stream, cut into `size`-byte chunks. */
function streaming(text: string, size: number, fail = false) {
  const bytes = enc.encode(text)
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size))
          if (fail) c.error(new Error('socket reset'))
          else c.close()
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )
}

async function lostFor(text: string, size = 7, options: { fail?: boolean; cancel?: boolean } = {}) {
  const lost: string[] = []
  const f = watchedFetch(streaming(text, size, options.fail), (why) => lost.push(why))
  if (options.cancel)
    await f('http://x', {
      method: 'POST',
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7 },
      }),
    }).then((r) => r.text())
  const r = await f('http://x', { method: 'POST', body: REQUEST })
  await r.text().catch(() => undefined)
  return lost
}

const answer = (id: number, extra = '') =>
  `event: message\ndata: {"result":{"content":[]${extra}},"jsonrpc":"2.0","id":${id}}\n\n`

describe('watchedFetch', () => {
  it('reports a stream that ends or breaks without the answer', async () => {
    expect(await lostFor('event: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n')).toHaveLength(
      1,
    )
    expect(await lostFor(answer(8))).toHaveLength(1)
    expect(await lostFor('', 7, { fail: true })).toHaveLength(1)
  })

  it('does not report an answered, resumable or cancelled request', async () => {
    for (const size of [1, 3, 7, 1000]) expect(await lostFor(answer(7), size)).toEqual([])
    expect(await lostFor(answer(7).replace(/\n/g, '\r\n'))).toEqual([])
    expect(await lostFor('id: evt-1\ndata: \n\n')).toEqual([])
    expect(await lostFor('', 7, { cancel: true })).toEqual([])
  })

  it('finds the answer in a 5 MiB event without decoding it whole', async () => {
    const big = `,"blob":"${'A'.repeat(5 * 1024 * 1024)}"`
    expect(await lostFor(answer(7, big), 64 * 1024)).toEqual([])
    expect(await lostFor(answer(9, big), 64 * 1024)).toHaveLength(1)
  })
})
