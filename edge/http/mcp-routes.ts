import type { Context } from 'hono'
import type { McpHandler } from '../mcp/index.ts'
import type { RouteSpec } from './route-spec.ts'

const SESSION_HEADER = {
  name: 'mcp-session-id',
  in: 'header' as const,
  required: false,
  description: 'The MCP session, from the `initialize` response (absent on `initialize`).',
  schema: { type: 'string' },
}

const JSON_RPC = { type: 'object', description: 'A JSON-RPC 2.0 message (or a batch).' }

/** The MCP Streamable HTTP endpoint as entries of the app's route table. */
export function mcpRoutes(mcp: McpHandler<Context>): RouteSpec[] {
  const handler = (c: Context) => mcp.handle(c.req.raw, c)
  const common = {
    path: '/mcp',
    parameters: [SESSION_HEADER],
    handler,
  }
  const errors = {
    '400': { description: 'Not a valid MCP request, or no session id where one is needed' },
    '401': { description: 'Missing or wrong bearer token' },
    '404': { description: 'Unknown or closed MCP session: initialize again' },
  }
  return [
    {
      ...common,
      method: 'POST',
      operationId: 'mcpPost',
      summary: 'MCP Streamable HTTP: send JSON-RPC messages (initialize, tools/list, tools/call)',
      requestBody: { required: true, schema: JSON_RPC },
      responses: {
        '200': { description: 'JSON-RPC response, as JSON or an SSE stream', schema: JSON_RPC },
        '202': { description: 'Notifications and responses accepted' },
        ...errors,
        '429': { description: 'Too many MCP sessions' },
      },
    },
    {
      ...common,
      method: 'GET',
      operationId: 'mcpStream',
      summary: 'MCP Streamable HTTP: the server-to-client SSE stream of a session',
      responses: {
        '200': { description: 'SSE stream of JSON-RPC messages', contentType: 'text/event-stream' },
        ...errors,
      },
    },
    {
      ...common,
      method: 'DELETE',
      operationId: 'mcpClose',
      summary: 'MCP Streamable HTTP: end a session (its isoagent session closes)',
      responses: { '200': { description: 'Session closed' }, ...errors },
    },
  ]
}
