import { IsoagentError } from '../errors.ts'

/** OAuth for an HTTP MCP server: a token, or client credentials exchanged for one. */
/**
 * How to authenticate to an HTTP server: a fixed `accessToken`; a client-credentials grant at a
 * given `tokenUrl` (client authentication in the body); or, without `tokenUrl`, a
 * client-credentials grant at the authorization server the MCP server names (OAuth protected
 * resource metadata, then the authorization server's metadata; `client_secret_basic`).
 */
export type McpOAuth =
  | { accessToken: string }
  | { tokenUrl?: string; clientId: string; clientSecret?: string; scopes?: string[] }

/** Settings every MCP server config shares. */
export interface McpCommonConfig {
  /** Default true; a disabled server is listed in `mcpStatus()` but not connected. */
  enabled?: boolean
  /** Deadline (ms) of initialize, each tools/list page and each call (default 60000). */
  toolTimeoutMs?: number
}

/** A local MCP server run as a child process over stdio (Node only). */
export interface McpStdioConfig extends McpCommonConfig {
  transport: 'stdio'
  command: string
  args?: string[]
  env?: Record<string, string>
  cwd?: string
}

/** A remote MCP server over Streamable HTTP, falling back to the legacy HTTP+SSE transport. */
export interface McpHttpConfig extends McpCommonConfig {
  transport: 'http'
  url: string
  headers?: Record<string, string>
  oauth?: McpOAuth
}

/** How to reach one MCP server. */
export type McpServerConfig = McpStdioConfig | McpHttpConfig

/** Default of {@link McpCommonConfig.toolTimeoutMs}. */
export const MCP_DEFAULT_TIMEOUT_MS = 60_000
/** Longest server name (so `mcp__<server>__<tool>` keeps room for the tool within 64). */
export const MCP_MAX_SERVER_NAME = 32

const SERVER_NAME = /^[A-Za-z0-9_-]+$/
const COMMON = ['enabled', 'toolTimeoutMs', 'transport']
const STDIO_KEYS = new Set([...COMMON, 'command', 'args', 'env', 'cwd'])
const HTTP_KEYS = new Set([...COMMON, 'url', 'headers', 'oauth'])

const refuse = (message: string) => new IsoagentError('invalid_argument', message)

/**
 * Throws `invalid_argument` unless `name` is a usable server name: `[A-Za-z0-9_-]`, 1..32 chars,
 * no `__` and no `_` at either end (either would make `mcp__<server>__<tool>` ambiguous).
 */
export function checkServerName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !SERVER_NAME.test(name))
    throw refuse(`MCP server name ${JSON.stringify(name)} must match ${SERVER_NAME}`)
  if (name.length > MCP_MAX_SERVER_NAME)
    throw refuse(`MCP server name "${name}" is longer than ${MCP_MAX_SERVER_NAME} characters`)
  if (name.includes('__') || name.startsWith('_') || name.endsWith('_'))
    throw refuse(
      `MCP server name "${name}" may not contain "__" nor start or end with "_" (tool names would be ambiguous)`,
    )
}

function stringRecord(value: unknown, what: string): void {
  if (
    value !== undefined &&
    (typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      Object.values(value).some((v) => typeof v !== 'string'))
  )
    throw refuse(`${what} must map names to strings`)
}

function checkOAuth(oauth: unknown, where: string): void {
  if (oauth === undefined) return
  if (typeof oauth !== 'object' || oauth === null) throw refuse(`${where}.oauth must be an object`)
  const o = oauth as Record<string, unknown>
  if ('accessToken' in o) {
    if (typeof o.accessToken !== 'string' || o.accessToken === '' || Object.keys(o).length !== 1)
      throw refuse(`${where}.oauth must be { accessToken } with a non-empty string`)
    return
  }
  for (const key of Object.keys(o))
    if (!['tokenUrl', 'clientId', 'clientSecret', 'scopes'].includes(key))
      throw refuse(`${where}.oauth: unknown field "${key}"`)
  if (typeof o.clientId !== 'string' || o.clientId === '')
    throw refuse(`${where}.oauth needs accessToken, or clientId (and tokenUrl, or discovery)`)
  if (o.tokenUrl !== undefined && typeof o.tokenUrl !== 'string')
    throw refuse(`${where}.oauth.tokenUrl must be a string`)
  if (o.clientSecret !== undefined && typeof o.clientSecret !== 'string')
    throw refuse(`${where}.oauth.clientSecret must be a string`)
  if (
    o.scopes !== undefined &&
    (!Array.isArray(o.scopes) || o.scopes.some((s) => typeof s !== 'string'))
  )
    throw refuse(`${where}.oauth.scopes must be an array of strings`)
}

/** Throws `invalid_argument` unless `config` is a well-formed {@link McpServerConfig}. */
export function checkServerConfig(
  name: string,
  config: unknown,
): asserts config is McpServerConfig {
  const where = `mcpServers.${name}`
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw refuse(`${where} must be an object`)
  const c = config as Record<string, unknown>
  const keys = c.transport === 'stdio' ? STDIO_KEYS : c.transport === 'http' ? HTTP_KEYS : undefined
  if (keys === undefined) throw refuse(`${where}.transport must be "stdio" or "http"`)
  for (const key of Object.keys(c))
    if (!keys.has(key)) throw refuse(`${where}: unknown field "${key}"`)
  if (c.enabled !== undefined && typeof c.enabled !== 'boolean')
    throw refuse(`${where}.enabled must be a boolean`)
  const t = c.toolTimeoutMs
  if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 86_400_000))
    throw refuse(`${where}.toolTimeoutMs must be an integer number of ms in 1..86400000`)
  if (c.transport === 'stdio') {
    if (typeof c.command !== 'string' || c.command === '')
      throw refuse(`${where}.command must be a non-empty string`)
    if (
      c.args !== undefined &&
      (!Array.isArray(c.args) || c.args.some((a) => typeof a !== 'string'))
    )
      throw refuse(`${where}.args must be an array of strings`)
    stringRecord(c.env, `${where}.env`)
    if (c.cwd !== undefined && typeof c.cwd !== 'string')
      throw refuse(`${where}.cwd must be a string`)
    return
  }
  if (typeof c.url !== 'string') throw refuse(`${where}.url must be a string`)
  let url: URL
  try {
    url = new URL(c.url)
  } catch {
    throw refuse(`${where}.url does not parse as a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refuse(`${where}.url must be http(s)`)
  stringRecord(c.headers, `${where}.headers`)
  checkOAuth(c.oauth, where)
}

/**
 * Check a whole `mcpServers` record. Throws `invalid_argument` for a bad name or config, and for
 * two names that differ only in case (permission rules and humans would confuse them).
 */
export function checkMcpServers(
  servers: unknown,
): asserts servers is Record<string, McpServerConfig> {
  if (servers === undefined) return
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw refuse('mcpServers must be a record of server name → config')
  const seen = new Map<string, string>()
  for (const [name, config] of Object.entries(servers)) {
    checkServerName(name)
    const folded = name.toLowerCase()
    const other = seen.get(folded)
    if (other !== undefined)
      throw refuse(
        `MCP server names "${other}" and "${name}" collide (names are compared ignoring case)`,
      )
    seen.set(folded, name)
    checkServerConfig(name, config)
  }
}

/**
 * The de-facto `.mcp.json` of desktop clients, as configs: `{ "mcpServers": { name: { command,
 * args?, env?, cwd? } | { type: "http" | "sse" | "streamable-http", url, headers? } } }`.
 * Throws `invalid_argument` for a file that does not have that shape.
 */
export function parseMcpJson(text: string): Record<string, McpServerConfig> {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (cause) {
    throw new IsoagentError('invalid_argument', '.mcp.json is not valid JSON', { cause })
  }
  const servers = (parsed as { mcpServers?: unknown } | null)?.mcpServers
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw refuse('.mcp.json must be { "mcpServers": { name: config } }')
  const out: Record<string, McpServerConfig> = {}
  for (const [name, raw] of Object.entries(servers)) {
    if (typeof raw !== 'object' || raw === null)
      throw refuse(`.mcp.json: ${name} must be an object`)
    const { type, ...rest } = raw as Record<string, unknown>
    if (typeof rest.url === 'string' || (type !== undefined && type !== 'stdio')) {
      if (
        type !== undefined &&
        !['http', 'sse', 'streamable-http', 'streamableHttp'].includes(String(type))
      )
        throw refuse(`.mcp.json: ${name} has an unknown type ${JSON.stringify(type)}`)
      out[name] = { transport: 'http', ...rest } as McpHttpConfig
    } else {
      out[name] = { transport: 'stdio', ...rest } as McpStdioConfig
    }
  }
  checkMcpServers(out)
  return out
}
