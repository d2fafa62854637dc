// HTTP overhead: a `read` through the Node server (`serve(createApp(...))` on loopback) against
// `session.tool('read')` in process, on the same session and file. The calls are interleaved
// (one of each per iteration, in rotating order) so load on a shared machine hits every side
// alike; p50 and p99 of each, as a ratio to in-process and as milliseconds added.
// Goal: ≤ 0.3 ms added at p50. A bare node:http server answering the same bytes to the same
// client is the floor: what Node's HTTP costs with no app at all.
//
//   npx tsx bench/http-overhead.ts      (or `npm run bench:http`)
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { memoryWorkspace } from '../adapters/index.ts'
import { createApp } from '../edge/index.ts'
import { serve } from '../edge/node.ts'
import { machineLine } from './harness.ts'

const WARMUP = Number(process.env.BENCH_WARMUP ?? 500)
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 3000)
const TOKEN = 'bench-token'

const source = Array.from(
  { length: 120 },
  (_, i) => `export const value${i} = ${i} // line ${i + 1}`,
)
const workspace = memoryWorkspace({ 'src/values.ts': source.join('\n') + '\n' })
const app = createApp({ workspace: () => workspace, token: TOKEN })
const server = await serve(app, { port: 0, handleSignals: false })
const args = { file_path: 'src/values.ts' }
const body = JSON.stringify({ args })

const created = await fetch(`${server.url}/v1/sessions`, {
  method: 'POST',
  headers: { authorization: `Bearer ${TOKEN}` },
})
const { id } = (await created.json()) as { id: string }
const session = app.context.store.get(id)!.session
const path = `/v1/sessions/${id}/tools/read`
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

// The floor: a bare node:http server answering the same bytes the app answers, read by the same
// keep-alive client (socket, parser and client cost, no app): what any Node HTTP server adds.
const floorAnswer = await (
  await fetch(server.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  })
).text()
const floorServer = http.createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(floorAnswer),
    })
    res.end(floorAnswer)
  })
})
await new Promise<void>((r) => floorServer.listen(0, '127.0.0.1', () => r()))
const floorPort = (floorServer.address() as import('node:net').AddressInfo).port
const floorAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })

function viaNodeHttp(port = server.port, via = agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: via,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => resolve(text))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

async function viaFetch(): Promise<string> {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  })
  return res.text()
}

const sides = {
  'session.tool (in process)': async () => (await session.tool('read', args)).output,
  'session.governedTool (in process)': async () =>
    (await session.governedTool('read', args)).output,
  'app.fetch, no socket (Hono + routes + JSON)': async () => {
    const res = await app.fetch(
      new Request(server.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body,
      }),
    )
    return (JSON.parse(await res.text()) as { output: string }).output
  },
  'HTTP, node:http keep-alive client': async () =>
    (JSON.parse(await viaNodeHttp()) as { output: string }).output,
  'HTTP, fetch client': async () => (JSON.parse(await viaFetch()) as { output: string }).output,
  'floor: bare node:http server, same answer, no tool call': async () =>
    (JSON.parse(await viaNodeHttp(floorPort, floorAgent)) as { output: string }).output,
}
type Side = keyof typeof sides
const names = Object.keys(sides) as Side[]
const expected = await sides['session.tool (in process)']()
for (const name of names) {
  if ((await sides[name]()) !== expected) throw new Error(`${name} read something else`)
}

const samples = new Map<Side, number[]>(names.map((n) => [n, []]))
for (let i = 0; i < WARMUP + ITERATIONS; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    const t0 = performance.now()
    await sides[name]()
    const ms = performance.now() - t0
    if (i >= WARMUP) samples.get(name)!.push(ms)
  }
}

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const base = samples.get('session.tool (in process)')!
const b50 = pct(base, 50)
const b99 = pct(base, 99)
console.log(`# HTTP overhead: read of a 120-line file, ${ITERATIONS} interleaved calls per side`)
console.log(machineLine())
console.log('')
console.log('| path | p50 ms | p99 ms | p50 ratio | p99 ratio | p50 added ms | p99 added ms |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const name of names) {
  const s = samples.get(name)!
  const p50 = pct(s, 50)
  const p99 = pct(s, 99)
  console.log(
    `| ${name} | ${p50.toFixed(3)} | ${p99.toFixed(3)} | ${(p50 / b50).toFixed(2)}x | ${(p99 / b99).toFixed(2)}x | ${(p50 - b50).toFixed(3)} | ${(p99 - b99).toFixed(3)} |`,
  )
}
const added = pct(samples.get('HTTP, node:http keep-alive client')!, 50) - b50
const floor = pct(samples.get('floor: bare node:http server, same answer, no tool call')!, 50)
console.log('')
console.log(
  `goal: ≤ 0.3 ms added at p50 (node:http client): ${added.toFixed(3)} ms — ${added <= 0.3 ? 'met' : 'NOT met'}`,
)
console.log(
  `the app's own share (HTTP p50 − in-process p50 − floor p50): ${(added - floor).toFixed(3)} ms`,
)

agent.destroy()
floorAgent.destroy()
floorServer.close()
await server.close()
