// generate_object: time to the first partial object (a `tool_output_delta` with
// `object_partial`, through a session) against time to the first token of the same answer read
// straight off the provider's stream, from the loopback fake, for both wire protocols. Also the
// whole call against the whole stream. The fake waits DELAY_MS before each SSE event, as a
// model's tokens would; the ratio and the difference are what isoagent adds on top.
//
//   npx tsx bench/generate-object.ts      (or `npm run bench:llm`)
import { performance } from 'node:perf_hooks'
import {
  Agent,
  anthropic,
  memoryWorkspace,
  openAICompatible,
  type LanguageModel,
  type ModelRequest,
} from '../adapters/index.ts'
import { startFakeProvider, type FakeStep } from '../test/llm/fake-provider.ts'
import { ADA, PERSON_SCHEMA } from '../test/llm/generate-object-cases.ts'
import { machineLine, median } from './harness.ts'

const RUNS = 40
const DELAY_MS = 2
const CHUNK_CHARS = 6

type Protocol = 'openai' | 'anthropic'

function step(protocol: Protocol): FakeStep {
  const json = JSON.stringify(ADA)
  const chunks: string[] = []
  for (let i = 0; i < json.length; i += CHUNK_CHARS) chunks.push(json.slice(i, i + CHUNK_CHARS))
  return protocol === 'openai'
    ? { text: json, chunks, delayMs: DELAY_MS }
    : { toolCalls: [{ name: 'person', arguments: json, chunks }], delayMs: DELAY_MS }
}

async function main(): Promise<void> {
  const fake = await startFakeProvider()
  const rows: string[][] = []
  for (const protocol of ['openai', 'anthropic'] as const) {
    const options = { baseURL: fake.baseURL, model: `bench-${protocol}` }
    const model: LanguageModel =
      protocol === 'openai' ? openAICompatible(options) : anthropic(options)
    const session = await Agent.create({ model }).session(memoryWorkspace())
    const request: ModelRequest = {
      messages: [{ role: 'user', content: 'Describe Ada' }],
      ...(protocol === 'anthropic'
        ? {
            tools: [{ name: 'person', description: 'person', parameters: PERSON_SCHEMA }],
            toolChoice: { name: 'person' },
          }
        : {}),
    }
    const ttft: number[] = []
    const rawTotal: number[] = []
    const ttfp: number[] = []
    const objTotal: number[] = []
    for (let run = 0; run < RUNS + 3; run++) {
      fake.program(options.model, [step(protocol), step(protocol)])
      let t0 = performance.now()
      let first: number | undefined
      for await (const part of model.stream(request)) {
        const token =
          (part.type === 'text_delta' && part.delta !== '') ||
          (part.type === 'tool_call_delta' && part.argumentsDelta !== '')
        if (token && first === undefined) first = performance.now() - t0
      }
      const raw = performance.now() - t0
      const stop = new AbortController()
      let firstPartial: number | undefined
      const events = session.events({ signal: stop.signal })
      const watching = (async () => {
        for await (const e of events) {
          if (
            e.type === 'tool_output_delta' &&
            firstPartial === undefined &&
            e.delta.startsWith('{"object_partial"')
          )
            firstPartial = performance.now() - t0
          if (e.type === 'tool_end') break
        }
      })()
      t0 = performance.now()
      const result = await session.tool('generate_object', {
        schema: PERSON_SCHEMA,
        prompt: 'Describe Ada',
        schema_name: 'person',
      })
      const total = performance.now() - t0
      await watching
      stop.abort()
      if (result.exitCode !== 0) throw new Error(`generate_object failed: ${result.output}`)
      if (run < 3) continue
      ttft.push(first!)
      rawTotal.push(raw)
      ttfp.push(firstPartial!)
      objTotal.push(total)
    }
    const mode = protocol === 'openai' ? 'strict' : 'tool'
    const r = (a: number, b: number) => `${(a / b).toFixed(2)}×`
    rows.push([
      `${protocol} (${mode}): first partial vs first token`,
      median(ttfp).toFixed(2),
      median(ttft).toFixed(2),
      `+${(median(ttfp) - median(ttft)).toFixed(2)}`,
      r(median(ttfp), median(ttft)),
    ])
    rows.push([
      `${protocol} (${mode}): valid object vs whole stream`,
      median(objTotal).toFixed(2),
      median(rawTotal).toFixed(2),
      `+${(median(objTotal) - median(rawTotal)).toFixed(2)}`,
      r(median(objTotal), median(rawTotal)),
    ])
    await session.close()
  }
  await fake.close()
  const header = [
    'operation (p50)',
    'generate_object ms',
    'provider stream ms',
    'added ms',
    'ratio',
  ]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`
  console.log(machineLine())
  console.log(
    `${RUNS} runs per row; the fake waits ${DELAY_MS} ms before each SSE event; ${CHUNK_CHARS}-character chunks of a ${JSON.stringify(ADA).length}-byte object\n`,
  )
  console.log([line(header), rule, ...rows.map(line)].join('\n'))
}

await main()
