// One MCP client scenario, run unchanged in Node and in Chromium: a session over `workspace`
// with one Streamable HTTP server; its tool names, status and the results of a few calls.
import { Agent, type WorkspaceServices } from '../../adapters/index.ts'

/** What the scenario saw (artifact URIs left out: they are random). */
export interface McpScenarioRecord {
  names: string[]
  status: { name: string; connected: boolean; toolCount: number }[]
  results: { tool: string; exitCode: number; output: string }[]
  written: string
}

export async function runMcpScenario(
  workspace: WorkspaceServices,
  url: string,
): Promise<McpScenarioRecord> {
  const session = await Agent.create().session(workspace, {
    mcpServers: { srv: { transport: 'http', url, toolTimeoutMs: 20_000 } },
  })
  try {
    const calls: [string, Record<string, unknown>][] = [
      ['mcp__srv__echo', { text: 'hello' }],
      ['mcp__srv__peek', { key: 'k1' }],
      ['mcp__srv__image', {}],
      ['mcp__srv__structured', { n: 21 }],
      ['mcp__srv__fail', {}],
      ['mcp__srv__my_tool_name', {}],
      ['mcp__srv__echo', { wrong: 1 }],
    ]
    const results = []
    for (const [tool, args] of calls) {
      const r = await session.tool(tool, args)
      results.push({
        tool,
        exitCode: r.exitCode,
        output: r.output.replace(/a3s:\/\/tool-output\/[^\]\s]+/g, 'a3s://tool-output/<id>'),
      })
    }
    // The MCP tool's answer flows into the workspace through a built-in tool.
    const echo = await session.tool('mcp__srv__echo', { text: 'to disk' })
    await session.tool('write', { file_path: 'mcp-out.txt', content: echo.output })
    const read = await session.tool('read', { file_path: 'mcp-out.txt' })
    return {
      names: session
        .toolNames()
        .filter((n) => n.startsWith('mcp__'))
        .sort(),
      status: session
        .mcpStatus()
        .map((s) => ({ name: s.name, connected: s.connected, toolCount: s.toolCount })),
      results,
      written: read.output,
    }
  } finally {
    await session.close()
  }
}
