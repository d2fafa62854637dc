import type { McpServerConfig } from './mcp-config.ts'

/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /auth|token|key|secret|cookie|session/i
/** Shorter values are not redacted (they would blank ordinary words). */
const MIN_SECRET_CHARS = 8

/**
 * The credentials in MCP server configs, for the session's redaction: values of headers named
 * like credentials (with and without a `Bearer`/`Basic`/`Token` scheme), OAuth access tokens and
 * client secrets. Strings shorter than 8 characters are left out.
 */
export function mcpSecrets(servers: Record<string, McpServerConfig>): string[] {
  const out: string[] = []
  for (const config of Object.values(servers)) {
    if (config.transport !== 'http') continue
    for (const [header, value] of Object.entries(config.headers ?? {}))
      if (CREDENTIAL_HEADER.test(header))
        out.push(value, value.replace(/^(Bearer|Basic|Token)\s+/i, ''))
    const oauth = config.oauth
    if (oauth !== undefined && 'accessToken' in oauth) out.push(oauth.accessToken)
    else if (oauth?.clientSecret !== undefined) out.push(oauth.clientSecret)
  }
  return secretsWorthRedacting(out)
}

/** `secrets` without those too short to redact. */
export function secretsWorthRedacting(secrets: readonly string[]): string[] {
  return secrets.filter((s) => s.length >= MIN_SECRET_CHARS)
}
