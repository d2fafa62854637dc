// MCP client overhead: `session.tool('mcp__srv__echo')` (kernel: validation, governance,
// projection, result mapping) against the same SDK `Client.callTool` made directly on its own
// connection to the same server, over stdio and over loopback Streamable HTTP. Calls of the two
// sides alternate one by one, so load from other processes lands on both alike; p50 and p99 of
// single-call latencies are reported with their ratios (goal: ours ≤ 1.2× the direct call), and
// the client process's CPU time per call (user + system around each call): on a loaded machine
// the wall-clock ratio mostly measures the scheduler, the CPU time still what each side does.
//
//   npx tsx bench/mcp-client.ts
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { Agent, memoryWorkspace, type McpServerConfig } from '../adapters/index.ts'
import '../adapters/node/index.ts'
import { streamableServer } from '../test/mcp-client/http-servers.ts'
import { toolServer } from '../test/mcp-client/fixtures/tool-server.mjs'
import { machineLine } from './harness.ts'

const CALLS = Number(process.env.MCP_BENCH_CALLS ?? 2000)
const WARMUP = 200
const script = fileURLToPath(
  new URL('../test/mcp-client/fixtures/stdio-server.mjs', import.meta.url),
)

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

async function measure(label: string, config: McpServerConfig, direct: Transport) {
  const session = await Agent.create().session(memoryWorkspace({}), { mcpServers: { srv: config } })
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(direct)
  const ours = () => session.tool('mcp__srv__echo', { text: 'x' })
  const peer = () => client.callTool({ name: 'echo', arguments: { text: 'x' } })
  for (let i = 0; i < WARMUP; i++) {
    await ours()
    await peer()
  }
  const a: number[] = []
  const b: number[] = []
  const cpu = [0, 0]
  for (let i = 0; i < CALLS; i++) {
    const first = i % 2 === 0
    for (const side of first ? [0, 1] : [1, 0]) {
      const c = process.cpuUsage()
      const t = performance.now()
      const r = side === 0 ? await ours() : await peer()
      const ms = performance.now() - t
      const used = process.cpuUsage(c)
      cpu[side]! += used.user + used.system
      ;(side === 0 ? a : b).push(ms)
      if (side === 0 && (r as { exitCode: number }).exitCode !== 0) throw new Error('call failed')
    }
  }
  a.sort((x, y) => x - y)
  b.sort((x, y) => x - y)
  const row = (q: number) => {
    const o = quantile(a, q) * 1000
    const p = quantile(b, q) * 1000
    return `${o.toFixed(0).padStart(7)} µs ${p.toFixed(0).padStart(7)} µs ${(o / p).toFixed(2).padStart(6)}×`
  }
  console.log(`| ${label.padEnd(5)} | p50 | ${row(0.5)} |`)
  console.log(`| ${label.padEnd(5)} | p99 | ${row(0.99)} |`)
  const [o, p] = cpu.map((us) => us / CALLS) as [number, number]
  console.log(
    `| ${label.padEnd(5)} | cpu | ${o.toFixed(0).padStart(7)} µs ${p.toFixed(0).padStart(7)} µs ${(o / p).toFixed(2).padStart(6)}× |`,
  )
  await client.close()
  await session.close()
}

console.log(machineLine())
console.log(`${CALLS} calls each side, alternating; ours = session.tool, peer = Client.callTool`)
console.log('| via   | q   |   ours     |   direct   |  ratio |')
await measure(
  'stdio',
  { transport: 'stdio', command: process.execPath, args: [script] },
  new StdioClientTransport({ command: process.execPath, args: [script], stderr: 'ignore' }),
)
const http = await streamableServer(() => toolServer())
await measure(
  'http',
  { transport: 'http', url: http.url },
  new StreamableHTTPClientTransport(new URL(http.url)),
)
await http.close()
