// The MCP conformance suite's client under test: isoagent's MCP client, driven the way a user
// drives it (an Agent with `mcpServers`, then `mcp__conf__<tool>` calls). The suite runs
// `<this command> <server url>` with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT, a JSON
// object, for the auth scenarios). Exit code 0: the client did its part.
import { Agent, memoryWorkspace, type McpServerConfig } from '../../adapters/node-entries/core.ts'

const url = process.argv[2]
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string
  client_secret?: string
}

/** What the client calls once connected, per scenario. */
const CALLS: Record<string, [string, Record<string, unknown>] | undefined> = {
  tools_call: ['add_numbers', { a: 5, b: 3 }],
  'sse-retry': ['test_reconnection', {}],
}

async function main(): Promise<void> {
  if (url === undefined) throw new Error('usage: isoagent-client <server url>')
  const server: McpServerConfig = {
    transport: 'http',
    url,
    toolTimeoutMs: 20_000,
    ...(context.client_id !== undefined
      ? { oauth: { clientId: context.client_id, clientSecret: context.client_secret ?? '' } }
      : {}),
  }
  const session = await Agent.create({ mcpServers: { conf: server } }).session(memoryWorkspace({}))
  try {
    const status = session.mcpStatus()[0]
    if (!status?.connected) throw new Error(`not connected: ${JSON.stringify(status)}`)
    const call = CALLS[scenario]
    if (call !== undefined) {
      const result = await session.tool(`mcp__conf__${call[0]}`, call[1])
      console.log(result.output)
      if (result.exitCode !== 0) throw new Error(`${call[0]} failed: ${result.output}`)
    } else {
      console.log(
        session
          .toolNames()
          .filter((n) => n.startsWith('mcp__conf__'))
          .join('\n'),
      )
    }
  } finally {
    await session.close()
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)
