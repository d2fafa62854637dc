import {
  IsoagentError,
  checkServerConfig,
  safeMcpFetch,
  type NetOptions,
} from '../../adapters/index.ts'
import { ApiError } from './api-error.ts'
import { isPlainObject, onlyFields, readJsonObject } from './body.ts'
import type { AppContext, RouteResponse, RouteSpec } from './route-spec.ts'
import { schemaRef } from './schemas.ts'
import { withSession } from './with-session.ts'

const failure = (description: string): RouteResponse => ({
  description,
  schema: schemaRef('Error'),
})

const STATUS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'connected', 'enabled', 'toolCount', 'transport'],
    properties: {
      name: { type: 'string' },
      connected: { type: 'boolean' },
      enabled: { type: 'boolean' },
      toolCount: { type: 'integer' },
      transport: { type: 'string', enum: ['stdio', 'http'] },
      error: { type: 'string' },
      skipped: { type: 'array', items: { type: 'string' } },
    },
  },
}

const ADD_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'config'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,32}$' },
    config: {
      type: 'object',
      additionalProperties: false,
      required: ['transport', 'url'],
      properties: {
        transport: { const: 'http' },
        url: { type: 'string' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        oauth: { type: 'object' },
        enabled: { type: 'boolean' },
        toolTimeoutMs: { type: 'integer', minimum: 1 },
      },
    },
  },
}

/** The failure of a connect as an API error: the client's request was fine, the server not. */
function connectError(error: unknown): ApiError {
  if (!(error instanceof IsoagentError)) throw error
  if (error.code === 'invalid_argument') return new ApiError(400, 'invalid_argument', error.message)
  return new ApiError(422, 'mcp_connect_failed', `${error.code}: ${error.message}`)
}

/**
 * `GET`/`POST /v1/sessions/:id/mcp` and `DELETE /v1/sessions/:id/mcp/:name`: a session's MCP
 * servers. Over the network only HTTP servers can be added, and their URL (with every
 * redirect and the OAuth token URL) goes through the safe HTTP policy of `net`: no private or
 * loopback address unless `net.allowHosts` names it.
 */
export function mcpClientRoutes(ctx: AppContext, net: NetOptions = {}): RouteSpec[] {
  const SESSION_ERRORS = {
    '401': failure('missing or wrong bearer token'),
    '404': failure('no such session (`session_not_found`)'),
  }
  return [
    {
      method: 'GET',
      path: '/v1/sessions/:id/mcp',
      operationId: 'mcpStatus',
      summary: "The session's MCP servers: connected, enabled, tool count, last error",
      responses: {
        '200': { description: 'mcpStatus()', schema: STATUS_SCHEMA },
        ...SESSION_ERRORS,
      },
      handler: withSession(ctx, (c, h) => c.json(h.session.mcpStatus())),
    },
    {
      method: 'POST',
      path: '/v1/sessions/:id/mcp',
      operationId: 'addMcpServer',
      summary: 'Add an HTTP MCP server to the session; its tools join as mcp__<name>__<tool>',
      requestBody: { required: true, schema: ADD_SCHEMA },
      responses: {
        '200': {
          description: '{ name, tools }: the published tool names',
          schema: {
            type: 'object',
            required: ['name', 'tools'],
            properties: {
              name: { type: 'string' },
              tools: { type: 'array', items: { type: 'string' } },
            },
          },
        },
        '400': failure('a bad name or config, a stdio server, a name in use'),
        ...SESSION_ERRORS,
        '413': failure('body over the size limit'),
        '422': failure(
          'the server could not be connected (`mcp_connect_failed`: refused destination, transport, timeout, credentials)',
        ),
      },
      handler: withSession(ctx, async (c, h) => {
        const body = await readJsonObject(c)
        onlyFields(body, ['name', 'config'])
        const { name, config } = body
        if (typeof name !== 'string')
          throw new ApiError(400, 'invalid_argument', '"name" must be a string')
        if (!isPlainObject(config) || config.transport !== 'http')
          throw new ApiError(
            400,
            'invalid_argument',
            '"config" must be an HTTP server ({ transport: "http", url, ... }): stdio servers are added by the host only',
          )
        try {
          checkServerConfig(name, config)
        } catch (error) {
          throw connectError(error)
        }
        try {
          const added = await h.session.addMcpServer(name, config, { fetch: safeMcpFetch(net) })
          return c.json({ name, tools: added.tools })
        } catch (error) {
          throw connectError(error)
        }
      }),
    },
    {
      method: 'DELETE',
      path: '/v1/sessions/:id/mcp/:name',
      operationId: 'removeMcpServer',
      summary: 'Remove an MCP server from the session (its tools leave, its connection closes)',
      responses: {
        '204': { description: 'removed' },
        '401': failure('missing or wrong bearer token'),
        '404': failure('no such session, or no such server (`not_found`)'),
      },
      handler: withSession(ctx, async (c, h) => {
        const removed = await h.session.removeMcpServer(c.req.param('name') ?? '')
        if (!removed)
          throw new ApiError(404, 'not_found', 'no MCP server of that name in this session')
        return c.body(null, 204)
      }),
    },
  ]
}
