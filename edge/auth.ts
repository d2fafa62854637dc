const encoder = new TextEncoder()

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
}

/** The token a request presents: `Authorization: Bearer <token>`, or `?token=` on a GET. */
export function presentedToken(request: Request, url: URL): string | undefined {
  const header = request.headers.get('authorization')
  if (header !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    return match?.[1]
  }
  // EventSource and plain links cannot send headers; a GET changes nothing.
  if (request.method === 'GET' || request.method === 'HEAD')
    return url.searchParams.get('token') ?? undefined
  return undefined
}

/**
 * A checker of presented tokens against `token`, in constant time: both sides are hashed
 * (so neither the length nor a prefix of the token leaks through timing) and the digests are
 * compared without an early exit.
 */
export function tokenChecker(token: string): (presented: string | undefined) => Promise<boolean> {
  if (token === '') throw new TypeError('token must not be empty')
  const expected = sha256(token)
  return async (presented) => {
    const [want, got] = await Promise.all([expected, sha256(presented ?? '')])
    let diff = presented === undefined ? 1 : 0
    for (let i = 0; i < want.length; i++) diff |= want[i]! ^ got[i]!
    return diff === 0
  }
}
