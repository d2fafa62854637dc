import ipaddr from 'ipaddr.js'

/** Why an address is refused: the name of the special range it falls in. */
export type BlockedRange = string

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

/**
 * Parse an IP address in any form a resolver or a URL may hand over (dotted, decimal, octal,
 * hex and short IPv4 forms; IPv6 with or without brackets and zone), or undefined when `text`
 * is not an address.
 */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let s = text.trim()
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  const zone = s.indexOf('%')
  if (zone >= 0 && s.includes(':')) s = s.slice(0, zone)
  if (s.includes(':')) return ipaddr.IPv6.isValid(s) ? ipaddr.IPv6.parse(s) : undefined
  if (
    !/^[0-9a-fA-Fx.]+$/.test(s) ||
    !/^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$/i.test(s)
  )
    return undefined
  return ipaddr.IPv4.isValid(s) ? ipaddr.IPv4.parse(s) : undefined
}

function v4Range(address: ipaddr.IPv4): BlockedRange | undefined {
  const range = address.range()
  return range === 'unicast' ? undefined : range
}

/**
 * The special range `address` falls in when the safe HTTP policy refuses it, else undefined.
 * Only global unicast is allowed: IPv4 loopback, RFC 1918, CGNAT, link-local (cloud metadata
 * 169.254.169.254), `0.0.0.0/8`, TEST-NETs, 198.18/15, multicast, 240/4 and broadcast are refused;
 * IPv6 outside 2000::/3 (loopback, `::`, ULA, link-local, multicast, IPv4-compatible) and the
 * special blocks inside it (documentation, NAT64, 6to4, Teredo, ORCHID, benchmarking) too.
 * IPv4-mapped IPv6 is judged as the IPv4 address it carries.
 */
export function blockedRange(address: ipaddr.IPv4 | ipaddr.IPv6): BlockedRange | undefined {
  if (address.kind() === 'ipv4') return v4Range(address as ipaddr.IPv4)
  const v6 = address as ipaddr.IPv6
  if (v6.isIPv4MappedAddress()) {
    const inner = v4Range(v6.toIPv4Address())
    return inner === undefined ? undefined : `ipv4Mapped:${inner}`
  }
  const range = v6.range()
  if (range !== 'unicast') return range
  if (!v6.match(GLOBAL_UNICAST_V6)) return 'reserved'
  return undefined
}

/**
 * Why the text address is refused (`'not an address'` when it does not parse), or undefined
 * when it is a public unicast address.
 */
export function blockedAddress(text: string): BlockedRange | undefined {
  const address = parseAddress(text)
  return address === undefined ? 'not an address' : blockedRange(address)
}

/** The canonical text of an address (IPv4 dotted quad, IPv6 RFC 5952), or undefined. */
export function canonicalAddress(text: string): string | undefined {
  return parseAddress(text)?.toString()
}
