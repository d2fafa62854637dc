import ipaddr from 'ipaddr.js'
import { IsoagentError } from '../errors.ts'
import { blockedRange, parseAddress } from './address-policy.ts'
import { blockedError } from './url-rules.ts'

/** One checked answer: the canonical address and its family. */
export interface CheckedAddress {
  address: string
  family: 4 | 6
}

/**
 * Check a resolver's answer for `host`: every address must parse and be public (a mixed answer
 * is refused whole), unless the host is allowed. Returns the addresses to connect to, in order,
 * IPv4-mapped IPv6 answers given as their IPv4 address. Throws `permission_denied` or, for an
 * empty or unparsable answer, `transport`.
 */
export function checkResolvedAddresses(
  host: string,
  answer: readonly string[],
  allowed: boolean,
): CheckedAddress[] {
  if (answer.length === 0)
    throw new IsoagentError('transport', `${host} did not resolve to any address`)
  const out: CheckedAddress[] = []
  const blocked: string[] = []
  for (const text of answer) {
    const parsed = parseAddress(text)
    if (parsed === undefined)
      throw new IsoagentError('transport', `${host} resolved to something that is not an address`)
    const range = blockedRange(parsed)
    if (range !== undefined) blocked.push(range)
    const v4 =
      parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()
        ? parsed.toIPv4Address()
        : parsed
    out.push({ address: v4.toString(), family: v4.kind() === 'ipv4' ? 4 : 6 })
  }
  if (!allowed && blocked.length > 0) {
    const mixed = blocked.length < answer.length
    throw blockedError(
      host,
      mixed ? `DNS answer mixes public and ${blocked[0]} addresses` : `resolves to ${blocked[0]}`,
    )
  }
  return out
}
