// `isoagent serve --embeddings-url U --embeddings-model M`: the embedder the flags build (used
// against the loopback fake), and the usage errors refused before anything listens.
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddingsFromFlags } from '../../bin/embeddings-flags.ts'
import { serveCommand } from '../../bin/serve.ts'
import { startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.ts'

let fake: FakeEmbeddings
beforeAll(async () => {
  fake = await startFakeEmbeddings()
})
afterAll(async () => {
  await fake.close()
})

function sink(): { stream: Writable; text: () => string } {
  let text = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString()
      done()
    },
  })
  return { stream, text: () => text }
}

describe('isoagent serve --embeddings-url', () => {
  it('builds an OpenAI-compatible embedder, the key from $ISOAGENT_EMBEDDINGS_KEY', async () => {
    const choice = embeddingsFromFlags(
      { 'embeddings-url': fake.url, 'embeddings-model': 'e1' },
      { ISOAGENT_EMBEDDINGS_KEY: 'k1' },
    )
    expect(choice).toMatchObject({ kind: 'embeddings', describe: `e1 at ${fake.url}` })
    if (choice.kind !== 'embeddings') throw new Error('no embedder')
    const answer = await choice.embeddings.embed([{ id: 'a', text: 'close' }], {
      signal: new AbortController().signal,
    })
    expect(answer.vectors[0]!.values[0]).toBe(1)
    expect(embeddingsFromFlags({}, { ISOAGENT_EMBEDDINGS_KEY: 'k' })).toEqual({ kind: 'none' })
  })

  it.each([
    [['--embeddings-model', 'e'], /needs --embeddings-url/],
    [['--embeddings-url', 'http://127.0.0.1:9/v1'], /needs --embeddings-model/],
    [['--embeddings-url', 'file:///etc/passwd', '--embeddings-model', 'e'], /not an http/],
  ])('refuses %j with exit code 2', async (args, message) => {
    const out = sink()
    const err = sink()
    const code = await serveCommand(
      ['--workspace', 'memory', '--port', '0', ...args],
      out.stream,
      err.stream,
    )
    expect(code).toBe(2)
    expect(err.text()).toMatch(message)
    expect(out.text()).toBe('')
  })
})
