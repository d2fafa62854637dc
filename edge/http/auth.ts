import { sha256 } from '@noble/hashes/sha2.js'

const encoder = new TextEncoder()

/**
 * The token a request presents: `Authorization: Bearer <token>`, or `?token=` on a GET. `url` is
 * the request's URL, parsed only when the query is looked at (a string is parsed then).
 */
export function presentedToken(request: Request, url: URL | string): string | undefined {
  const header = request.headers.get('authorization')
  if (header !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    return match?.[1]
  }
  // EventSource and plain links cannot send headers; a GET changes nothing.
  if (request.method === 'GET' || request.method === 'HEAD')
    return (typeof url === 'string' ? new URL(url) : url).searchParams.get('token') ?? undefined
  return undefined
}

/**
 * A checker of presented tokens against `token`, in constant time: both sides are hashed
 * (so neither the length nor a prefix of the token leaks through timing) and the digests are
 * compared without an early exit. Synchronous: no thread hop per request.
 */
export function tokenChecker(token: string): (presented: string | undefined) => boolean {
  if (token === '') throw new TypeError('token must not be empty')
  const want = sha256(encoder.encode(token))
  return (presented) => {
    const got = sha256(encoder.encode(presented ?? ''))
    let diff = presented === undefined ? 1 : 0
    for (let i = 0; i < want.length; i++) diff |= want[i]! ^ got[i]!
    return diff === 0
  }
}
