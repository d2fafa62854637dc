export {
  checkMcpServers,
  checkServerConfig,
  checkServerName,
  parseMcpJson,
  MCP_DEFAULT_TIMEOUT_MS,
  MCP_MAX_SERVER_NAME,
} from './mcp-config.ts'
export type {
  McpCommonConfig,
  McpHttpConfig,
  McpOAuth,
  McpServerConfig,
  McpStdioConfig,
} from './mcp-config.ts'
export { MCP_MAX_LIST_PAGES, MCP_RECONNECT_DELAYS_MS } from './mcp-limits.ts'
export { confirmationReason } from './mcp-gating.ts'
export type { McpAddOptions, McpServerStatus } from './mcp-manager.ts'
export { MCP_RESULT_LIMITS } from './mcp-result.ts'
export {
  MCP_MAX_TOOL_NAME,
  MCP_MAX_TOOLS_PER_SERVER,
  publishNames,
  sanitizeToolName,
} from './mcp-tool-names.ts'
export { setMcpStdioLauncher } from './mcp-transports.ts'
export type { McpFetch, McpStdioLauncher } from './mcp-transports.ts'
export { safeMcpFetch } from './safe-mcp-fetch.ts'
