import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { IsoagentError } from '../errors.ts'
import type { McpHttpConfig, McpStdioConfig } from './mcp-config.ts'

/** A fetch the SDK's HTTP transports use (Web `fetch`, or one under the safe HTTP policy). */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>

/**
 * Starts a stdio MCP server and gives its transport. Set by the Node entry (`isoagent/node`):
 * the child runs in its own process group, killed when the transport closes.
 */
export type McpStdioLauncher = (config: McpStdioConfig) => Transport

let stdioLauncher: McpStdioLauncher | undefined

/** Register the runtime's stdio launcher (Node's entry does; no other runtime has one). */
export function setMcpStdioLauncher(launcher: McpStdioLauncher | undefined): void {
  stdioLauncher = launcher
}

/** The stdio launcher of this runtime, or a typed `unsupported` error. */
export function stdioTransport(config: McpStdioConfig): Transport {
  if (stdioLauncher === undefined)
    throw new IsoagentError(
      'unsupported',
      'stdio MCP servers run only on Node.js (import isoagent/node); use an http server here',
    )
  return stdioLauncher(config)
}

/** `Authorization` and the configured headers of an HTTP server, with `token` when given. */
export function httpHeaders(
  config: McpHttpConfig,
  token: string | undefined,
): Record<string, string> {
  return { ...config.headers, ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}) }
}

/**
 * An access token for `oauth`: the configured one, or one from a client-credentials grant
 * (`POST tokenUrl`, form-encoded, client authentication in the body). Throws `transport`,
 * `timeout` or `permission_denied` (the token endpoint refused the client).
 */
export async function accessToken(
  oauth: McpHttpConfig['oauth'],
  fetchFn: McpFetch,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (oauth === undefined) return undefined
  if ('accessToken' in oauth) return oauth.accessToken
  if (oauth.tokenUrl === undefined) return undefined
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: oauth.clientId })
  if (oauth.clientSecret !== undefined) body.set('client_secret', oauth.clientSecret)
  if (oauth.scopes?.length) body.set('scope', oauth.scopes.join(' '))
  const response = await fetchFn(oauth.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: body.toString(),
    signal,
  })
  const text = await response.text()
  if (!response.ok)
    throw new IsoagentError(
      response.status === 400 || response.status === 401 ? 'permission_denied' : 'transport',
      `the token endpoint answered ${response.status}`,
    )
  let token: unknown
  try {
    token = (JSON.parse(text) as { access_token?: unknown }).access_token
  } catch {
    token = undefined
  }
  if (typeof token !== 'string' || token === '')
    throw new IsoagentError('transport', 'the token endpoint answered without an access_token')
  return token
}

/**
 * The SDK's OAuth provider for a client-credentials grant found by discovery (`oauth` without
 * `tokenUrl`): the transport answers a 401 by reading the server's protected resource metadata
 * and the authorization server's, then asks for a token with `client_secret_basic`.
 */
export function discoveryAuth(
  oauth: McpHttpConfig['oauth'],
  onSecret: (secret: string) => void,
): OAuthClientProvider | undefined {
  if (oauth === undefined || 'accessToken' in oauth || oauth.tokenUrl !== undefined)
    return undefined
  const provider = new ClientCredentialsProvider({
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret ?? '',
    clientName: 'isoagent',
    ...(oauth.scopes?.length ? { scope: oauth.scopes.join(' ') } : {}),
  })
  // Tokens the grant returns are redacted like configured credentials.
  const save = provider.saveTokens.bind(provider)
  provider.saveTokens = (tokens) => {
    onSecret(tokens.access_token)
    if (tokens.refresh_token !== undefined) onSecret(tokens.refresh_token)
    save(tokens)
  }
  return provider
}
