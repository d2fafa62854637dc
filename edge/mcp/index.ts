// The MCP server of isoagent: one per session (stdio or any transport), and the Streamable HTTP
// endpoint that gives each MCP session a session of its own. Web-standard only.
export { createMcpServer, mcpTools, toCallToolResult, MCP_SERVER_INFO } from './server.ts'
export type { McpConfirmationMode, McpServerInfo, McpServerOptions } from './server.ts'
export { agentMcpSessions } from './sessions.ts'
export type { AgentMcpSessionsOptions, McpSessions } from './sessions.ts'
export {
  createMcpHandler,
  mountMcp,
  DEFAULT_MCP_IDLE_MS,
  DEFAULT_MCP_MAX_SESSIONS,
} from './handler.ts'
export type { McpHandler, McpHandlerOptions, McpMountable, McpRequestContext } from './handler.ts'
