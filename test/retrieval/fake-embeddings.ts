// A loopback server speaking the OpenAI embeddings wire protocol (`POST /embeddings`), embedding
// deterministically with a small concept table so that synonyms meet ("shutdown", "close",
// "teardown" share a dimension); other words land on hashed dimensions. It records every input
// text, honours `encoding_format: "base64"`, and can be told to misbehave.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { FAKE_DIMENSION, embedText } from './concept-embedding.ts'

export { FAKE_DIMENSION, embedText }

/** How the fake misbehaves on the next requests. */
export interface FakeBehaviour {
  /** Answer 400 for a request holding an input that contains this text. */
  rejectText?: string
  /** Answer 500 to this many requests first (`true`: to every request). */
  serverError?: number | true
  /** Answer 429 (with `Retry-After: 0`) to this many requests first. */
  rateLimited?: number
  /** Never answer requests holding an input that contains this text (or every request: true). */
  hang?: string | true
  /** Wait this long before answering. */
  delayMs?: number
  /** Answer vectors of this many dimensions. */
  dimensions?: number
  /** Put NaN in every vector (sent as base64). */
  nan?: boolean
  /** Leave out the last vector of each answer. */
  dropLast?: boolean
  /** Answer the first vector twice instead of the last. */
  duplicate?: boolean
}

export interface FakeEmbeddings {
  url: string
  /** Every input text received, in order. */
  inputs: string[]
  /** Inputs per request, in order. */
  requestSizes: number[]
  /** Status codes answered, in order. */
  statuses: number[]
  /** The `Origin` header of each POST (a browser page sends one), in order. */
  origins: (string | undefined)[]
  behaviour: FakeBehaviour
  close(): Promise<void>
}

function floatsBase64(values: number[]): string {
  const bytes = new Uint8Array(values.length * 4)
  const view = new DataView(bytes.buffer)
  values.forEach((x, i) => view.setFloat32(i * 4, x, true))
  return Buffer.from(bytes).toString('base64')
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = []
  for await (const part of req) parts.push(part as Buffer)
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>
}

// A page on another loopback port may call it: the preflight and every answer allow that.
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'content-type, authorization',
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const fake = {
    inputs: [] as string[],
    requestSizes: [] as number[],
    statuses: [] as number[],
    origins: [] as (string | undefined)[],
    behaviour: {} as FakeBehaviour,
  }
  const hung: ServerResponse[] = []
  const answer = (res: ServerResponse, status: number, body: unknown, headers = {}): void => {
    fake.statuses.push(status)
    res.writeHead(status, { 'content-type': 'application/json', ...CORS, ...headers })
    res.end(JSON.stringify(body))
  }
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'OPTIONS') return void res.writeHead(204, CORS).end()
      fake.origins.push(req.headers.origin)
      if (req.method !== 'POST' || req.url !== '/v1/embeddings')
        return answer(res, 404, { error: { message: 'not found' } })
      const body = await bodyOf(req)
      const inputs = typeof body.input === 'string' ? [body.input] : (body.input as string[])
      fake.inputs.push(...inputs)
      fake.requestSizes.push(inputs.length)
      const b = fake.behaviour
      if (
        b.hang === true ||
        (typeof b.hang === 'string' && inputs.some((t) => t.includes(b.hang as string)))
      )
        return void hung.push(res)
      if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs))
      if (b.serverError === true || (b.serverError ?? 0) > 0) {
        if (b.serverError !== true) b.serverError!--
        return answer(res, 500, { error: { message: 'upstream exploded' } })
      }
      if ((b.rateLimited ?? 0) > 0) {
        b.rateLimited!--
        return answer(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' })
      }
      if (b.rejectText !== undefined && inputs.some((t) => t.includes(b.rejectText!)))
        return answer(res, 400, { error: { message: 'input rejected' } })
      const base64 = body.encoding_format === 'base64' || b.nan === true
      let data = inputs.map((text, index) => {
        let v = embedText(text)
        if (b.dimensions !== undefined)
          v = Array.from({ length: b.dimensions }, (_, i) => v[i % v.length]!)
        if (b.nan) v[0] = Number.NaN
        return { object: 'embedding', index, embedding: base64 ? floatsBase64(v) : v }
      })
      if (b.dropLast) data = data.slice(0, -1)
      if (b.duplicate && data.length > 1) data = [...data.slice(0, -1), data[0]!]
      answer(res, 200, {
        object: 'list',
        data,
        model: body.model,
        usage: { prompt_tokens: 0, total_tokens: 0 },
      })
    })()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
}
