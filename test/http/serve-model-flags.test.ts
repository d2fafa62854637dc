// `isoagent serve`'s model flags: the choices they make, and the usage errors they refuse
// before anything listens.
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { modelFromFlags } from '../../bin/model-flags.ts'
import { serveCommand } from '../../bin/serve.ts'

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

describe('isoagent serve --model-provider', () => {
  it('builds an OpenAI-compatible or Anthropic model, the key from the environment', () => {
    const openai = modelFromFlags(
      { 'model-provider': 'openai', model: 'm1', 'model-base-url': 'http://127.0.0.1:9/v1' },
      { ISOAGENT_MODEL_KEY: 'k1', OPENAI_API_KEY: 'k2' },
    )
    expect(openai).toMatchObject({ kind: 'model', describe: 'openai m1 at http://127.0.0.1:9/v1' })
    if (openai.kind === 'model') expect(openai.model.modelId).toBe('m1')
    const claude = modelFromFlags({ 'model-provider': 'anthropic' }, {})
    expect(claude).toMatchObject({ kind: 'model' })
    if (claude.kind === 'model') {
      expect(claude.model.provider).toContain('anthropic')
      expect(claude.describe).toContain('(no key)')
    }
    expect(modelFromFlags({}, { OPENAI_API_KEY: 'k' })).toEqual({ kind: 'none' })
  })

  it.each([
    [['--model-provider', 'gemini'], /must be openai or anthropic/],
    [['--model', 'gpt'], /need --model-provider/],
    [['--model-provider', 'openai', '--model-base-url', 'file:///etc/passwd'], /not an http/],
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
