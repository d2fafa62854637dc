import type { LookupFunction } from 'node:net'
import type { Agent } from 'undici'
import {
  checkResolvedAddresses,
  hostAllowed,
  type HttpTransport,
  type NetResolver,
} from '../../src/index.ts'
import { webBody } from './node-body.ts'

/** The system resolver (`getaddrinfo`), every answer in the order it gave them. */
export const systemResolver: NetResolver = async (hostname) => {
  const { lookup } = await import('node:dns/promises')
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address)
}

/**
 * A `net.connect` lookup that resolves with `resolve`, refuses answers holding any non-public
 * address (unless `trusted`), and hands the connection exactly the addresses it checked.
 */
export function pinnedLookup(resolve: NetResolver, trusted: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (answer) => {
        let checked
        try {
          checked = checkResolvedAddresses(hostname, answer, trusted)
        } catch (error) {
          callback(error as NodeJS.ErrnoException, '', 0)
          return
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = wanted === 0 ? checked : checked.filter((a) => a.family === wanted)
        const first = usable[0]
        if (first === undefined) {
          const error = Object.assign(new Error(`${hostname} has no IPv${wanted} address`), {
            code: 'ENOTFOUND',
          })
          callback(error, '', 0)
          return
        }
        if (options.all === true) {
          ;(callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(
            null,
            usable,
          )
        } else callback(null, first.address, first.family)
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    )
  }
}

const NULL_BODY = new Set([101, 103, 204, 205, 304])

interface AgentPair {
  checking: Agent
  trusting: Agent
}

const agents = new WeakMap<NetResolver, AgentPair>()

type Undici = typeof import('undici')

// undici loads at the first request: importing isoagent/node (the CLI) does not pay for it.
let undici: Promise<Undici> | undefined

/**
 * undici's exports. Node gives a CommonJS module's exports both as named exports and as
 * `default`; the esbuild bundle of the CLI (dist/cli) gives only `default`, so read that first.
 */
function loadUndici(): Promise<Undici> {
  return (undici ??= import('undici').then(
    (m) => (m as Undici & { default?: Undici }).default ?? m,
  ))
}

async function agentsFor(resolve: NetResolver): Promise<AgentPair> {
  const { Agent } = await loadUndici()
  let pair = agents.get(resolve)
  if (pair === undefined) {
    pair = {
      checking: new Agent({ connect: { lookup: pinnedLookup(resolve, false) } }),
      trusting: new Agent({ connect: { lookup: pinnedLookup(resolve, true) } }),
    }
    agents.set(resolve, pair)
  }
  return pair
}

/**
 * The HTTP transport of Node.js: undici with a connect-time lookup that resolves names itself
 * (the session's `net.resolve`, else the system resolver), refuses an answer mixing public and
 * private addresses, and pins each connection to the addresses it checked, so DNS rebinding
 * between check and connect cannot happen (`address_check: "resolved"`). Importing
 * `isoagent/node` makes it the default transport.
 */
export const nodeHttpTransport: HttpTransport = {
  addressCheck: 'resolved',
  async fetch(request) {
    const pair = await agentsFor(request.net.resolve ?? systemResolver)
    const { request: undiciRequest } = await loadUndici()
    const dispatcher = hostAllowed(request.url, request.net.allowHosts)
      ? pair.trusting
      : pair.checking
    // undici's request (Node streams, then one Web stream over them) moves bytes at about twice
    // the speed of its fetch's body stream, and follows no redirect either.
    const answer = await undiciRequest(request.url, {
      method: request.method as 'GET',
      headers: Object.fromEntries(request.headers),
      body: request.body ?? null,
      signal: request.signal ?? null,
      dispatcher,
    })
    const headers = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
    }
    const status = answer.statusCode
    if (NULL_BODY.has(status) || request.method === 'HEAD') {
      answer.body.resume()
      return new Response(null, { status, headers })
    }
    const body = webBody(answer.body)
    return new Response(body, { status, headers })
  },
}
