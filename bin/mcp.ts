import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { Agent, type Session } from '../adapters/index.ts'
import { localWorkspace } from '../adapters/node/index.ts'
import { createMcpServer } from '../edge/mcp/index.ts'
import { readMcpConfig } from './mcp-config.ts'

const USAGE = `Usage: isoagent mcp [--workspace DIR] [--mcp-config FILE]
  Serve the tools of a session over DIR (default: current directory) to an MCP client over
  stdio (JSON-RPC on stdin/stdout; logs on stderr). Ends when stdin closes.
  --mcp-config FILE: MCP servers whose tools the session offers too (mcp__<name>__<tool>),
  in the .mcp.json format; default ./.mcp.json when present.`

/**
 * `isoagent mcp`: an MCP server over stdio for desktop MCP clients. Resolves with the exit code
 * once stdin closes (or on SIGINT/SIGTERM), after the session (and its running commands) closed.
 */
export async function mcpMain(
  argv: string[],
  input: NodeJS.ReadableStream & { off: NodeJS.ReadableStream['off'] } = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let values
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        workspace: { type: 'string', short: 'w', default: '.' },
        'mcp-config': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }))
  } catch (error) {
    err.write(`isoagent mcp: ${(error as Error).message}\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    err.write(USAGE + '\n')
    return 0
  }
  let session: Session
  try {
    const mcpServers = readMcpConfig(values['mcp-config'])
    session = await Agent.create().session(
      localWorkspace(values.workspace),
      mcpServers ? { mcpServers } : {},
    )
  } catch (error) {
    err.write(`isoagent mcp: ${(error as Error).message}\n`)
    return 2
  }
  const server = createMcpServer(session)
  const transport = new StdioServerTransport(
    input as ConstructorParameters<typeof StdioServerTransport>[0],
    output as ConstructorParameters<typeof StdioServerTransport>[1],
  )
  let stop!: () => void
  const stopped = new Promise<void>((resolve) => (stop = resolve))
  const onSignal = () => stop()
  input.once('end', stop)
  input.once('close', stop)
  output.once('error', stop)
  const onclose = server.onclose
  server.onclose = () => {
    onclose?.()
    stop()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    await server.connect(transport)
    err.write(`isoagent mcp: serving ${session.toolNames().join(', ')} over ${values.workspace}\n`)
    await stopped
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await server.close().catch(() => undefined)
    await session.close()
  }
  // Nothing left should hold the process; if something does, stdin is gone and so is the client.
  setTimeout(() => process.exit(0), 2000).unref()
  return 0
}
