import { errorResponse } from './api-error.ts'

/** What {@link hostGuard} accepts besides loopback names and IP literals. */
export interface HostPolicy {
  /**
   * Extra host names a request may name in `Host` and `Origin` (a deployment behind a proxy or
   * under a DNS name): `example.com` (any port), `example.com:8443` (that port only),
   * `.example.com` (it and its subdomains), `*` (any host: no check).
   */
  allowedHosts?: readonly string[]
  /**
   * Any `Host` is the server's own (a Worker: the platform routes requests to it by `Host`);
   * `Origin` must then name that host or an allowed one.
   */
  trustHost?: boolean
}

/** A host name and port, lower-case, IPv6 without brackets; port undefined when not given. */
interface HostPort {
  name: string
  port: number | undefined
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 }

function parseHost(value: string): HostPort | undefined {
  try {
    const url = new URL(`http://${value}`)
    if (url.username !== '' || url.password !== '' || url.pathname !== '/') return undefined
    // `new URL` drops the default port 80; a Host without a port names it too.
    return { name: url.hostname.toLowerCase(), port: url.port === '' ? undefined : +url.port }
  } catch {
    return undefined
  }
}

function parseOrigin(value: string): HostPort | undefined {
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : +url.port
    return { name: url.hostname.toLowerCase(), port }
  } catch {
    return undefined
  }
}

const bare = (name: string) => name.replace(/^\[|\]$/g, '')

/** An IP literal (no DNS name can be rebound to be one) or `localhost` / `*.localhost`. */
function isLocalName(name: string): boolean {
  const n = bare(name)
  if (n === 'localhost' || n.endsWith('.localhost')) return true
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(n)) return true
  return n.includes(':') && /^[0-9a-f:.]+$/.test(n)
}

function allowedBy(entry: string, host: HostPort): boolean {
  const rule = entry.trim().toLowerCase()
  if (rule === '*') return true
  if (rule.startsWith('.')) {
    const domain = rule.slice(1)
    return host.name === domain || host.name.endsWith(rule)
  }
  const parsed = parseHost(rule)
  if (parsed === undefined) return false
  if (parsed.name !== host.name) return false
  return parsed.port === undefined || parsed.port === (host.port ?? 80)
}

/**
 * A check of each request's `Host` and `Origin` headers against the server's own addresses,
 * which defeats DNS rebinding (a page of a foreign site whose name was rebound to this server's
 * address sends that name as `Host` and `Origin`). A host passes when it is a loopback name or an
 * IP literal on `localPort` (the port the request came in on; any port when unknown), or when
 * {@link HostPolicy.allowedHosts} names it. `Origin`, when sent, must pass the same test (or be
 * the request's own host under {@link HostPolicy.trustHost}). A refusal is a 403
 * `host_not_allowed` JSON error; `undefined` lets the request through.
 */
export function hostGuard(
  policy: HostPolicy = {},
): (request: Request, localPort?: number) => Response | undefined {
  const allowed = policy.allowedHosts ?? []
  if (allowed.some((a) => a.trim() === '*')) return () => undefined
  const ok = (host: HostPort, localPort: number | undefined) =>
    (isLocalName(host.name) && (localPort === undefined || (host.port ?? 80) === localPort)) ||
    allowed.some((entry) => allowedBy(entry, host))
  const refuse = (what: string) =>
    errorResponse(
      403,
      'host_not_allowed',
      `${what} is not a name of this server; start it with an allowed host (allowedHosts, --allowed-host) to serve it under that name`,
    )
  return (request, localPort) => {
    const hostHeader = request.headers.get('host') ?? new URL(request.url).host
    const host = parseHost(hostHeader)
    if (host === undefined) return refuse('the Host header')
    if (!policy.trustHost && !ok(host, localPort))
      return refuse(`Host ${JSON.stringify(hostHeader.slice(0, 100))}`)
    const originHeader = request.headers.get('origin')
    if (originHeader === null) return undefined
    const origin = parseOrigin(originHeader)
    if (origin === undefined) return refuse(`Origin ${JSON.stringify(originHeader.slice(0, 100))}`)
    const sameHost =
      policy.trustHost && origin.name === host.name && origin.port === (host.port ?? origin.port)
    if (!sameHost && !ok(origin, localPort))
      return refuse(`Origin ${JSON.stringify(originHeader.slice(0, 100))}`)
    return undefined
  }
}
