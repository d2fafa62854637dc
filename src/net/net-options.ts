import { IsoagentError } from '../errors.ts'

/**
 * Resolves a host name to its IP addresses (any textual form). The Node transport checks every
 * answer against the address policy and connects only to the addresses it checked.
 */
export type NetResolver = (hostname: string) => Promise<readonly string[]>

/** Network options of a session (`SessionOptions.net`). */
export interface NetOptions {
  /**
   * Host names or address literals (optionally `host:port`) that pass the address policy: for
   * tests and intranet use, never a default. Names are matched case-insensitively.
   */
  allowHosts?: readonly string[]
  /** DNS lookup used by transports that resolve (Node) instead of the system resolver. */
  resolve?: NetResolver
  /** `User-Agent` of every request (default `isoagent`). */
  userAgent?: string
}

/** Default `User-Agent`. */
export const DEFAULT_USER_AGENT = 'isoagent'

/** Throws `invalid_argument` unless `net` is a well-formed {@link NetOptions}. */
export function checkNetOptions(net: unknown): asserts net is NetOptions | undefined {
  if (net === undefined) return
  if (typeof net !== 'object' || net === null || Array.isArray(net))
    throw new IsoagentError('invalid_argument', 'net must be an object')
  const o = net as Record<string, unknown>
  for (const key of Object.keys(o)) {
    if (key !== 'allowHosts' && key !== 'resolve' && key !== 'userAgent')
      throw new IsoagentError('invalid_argument', `unknown net option "${key}"`)
  }
  const hosts = o.allowHosts
  const bad = Array.isArray(hosts)
    ? hosts.find((h) => typeof h !== 'string' || !wellFormedHostEntry(h))
    : undefined
  if (hosts !== undefined && (!Array.isArray(hosts) || bad !== undefined)) {
    const named = bad === undefined ? '' : ` (not one: ${JSON.stringify(shortened(bad))})`
    throw new IsoagentError(
      'invalid_argument',
      `net.allowHosts must be an array of host names or address literals (optionally host:port)${named}`,
    )
  }
  if (o.resolve !== undefined && typeof o.resolve !== 'function')
    throw new IsoagentError('invalid_argument', 'net.resolve must be a function')
  const ua = o.userAgent
  if (ua !== undefined && (typeof ua !== 'string' || ua === '' || /[\r\n]/.test(ua)))
    throw new IsoagentError('invalid_argument', 'net.userAgent must be a non-empty one-line string')
}

/** A refused entry as a message quotes it: at most 64 characters. */
function shortened(entry: unknown): unknown {
  return typeof entry === 'string' && entry.length > 64 ? `${entry.slice(0, 61)}...` : entry
}

/**
 * Whether `entry` is a host name, an IPv4 literal, a bare or bracketed IPv6 literal, optionally
 * with `:port` (1-65535; bracketed form for IPv6): the forms `hostNameAllowed` matches. Anything
 * else (`host:notaport`, `:80`, `[::1`, a URL) would be a rule that matches nothing.
 */
function wellFormedHostEntry(entry: string): boolean {
  const e = entry.trim()
  if (e === '' || e.length > 260) return false
  const portOk = (p: string | undefined) =>
    p === undefined || (Number(p) >= 1 && Number(p) <= 65535)
  const bracket = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/i.exec(e)
  if (bracket) return bracket[1]!.includes(':') && portOk(bracket[2])
  if (e.indexOf(':') !== e.lastIndexOf(':')) return /^[0-9a-f:.]+$/i.test(e)
  const named = /^([a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*\.?)(?::(\d{1,5}))?$/i.exec(e)
  return named !== null && named[1]!.length <= 253 && portOk(named[2])
}
