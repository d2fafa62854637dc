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
  const check = (request: Request, localPort: number | undefined) => {
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
  return passedBefore(check)
}

/** How many passing (port, Host, Origin) combinations {@link passedBefore} remembers. */
const PASSED_MEMO_SIZE = 64

/**
 * `check`, remembering the (port, `Host`, `Origin`) combinations it let through: the answer is a
 * function of those alone, and a client sends the same ones on every request, so the URL parsing
 * is done once per combination. Refusals are not remembered (each gets a response of its own).
 */
function passedBefore(
  check: (request: Request, localPort: number | undefined) => Response | undefined,
): (request: Request, localPort?: number) => Response | undefined {
  const passed = new Set<string>()
  return (request, localPort) => {
    const host = request.headers.get('host')
    if (host === null) return check(request, localPort)
    // No header value holds a line break, so the key names one combination only.
    const key = `${localPort ?? ''}\n${host}\n${request.headers.get('origin') ?? ''}`
    if (passed.has(key)) return undefined
    const refused = check(request, localPort)
    if (refused === undefined) {
      if (passed.size >= PASSED_MEMO_SIZE) passed.clear()
      passed.add(key)
    }
    return refused
  }
}
