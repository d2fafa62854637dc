import { fatal } from './download-job.ts'

/** A parsed `Content-Range: bytes first-last/total` (total undefined for `*`). */
export interface ContentRange {
  first: number
  last: number
  total: number | undefined
}

/** Parse a `Content-Range` header strictly, or undefined when it is absent or malformed. */
export function parseContentRange(header: string | null): ContentRange | undefined {
  if (header === null) return undefined
  const m = /^\s*bytes\s+(\d{1,16})-(\d{1,16})\/(\d{1,16}|\*)\s*$/i.exec(header)
  if (m === null) return undefined
  const first = Number(m[1])
  const last = Number(m[2])
  const total = m[3] === '*' ? undefined : Number(m[3])
  if (last < first || (total !== undefined && last >= total)) return undefined
  return { first, last, total }
}

/** The strong ETag of a response, or undefined (absent or weak `W/`). */
export function strongEtag(headers: Headers): string | undefined {
  const etag = headers.get('etag')?.trim()
  if (etag === undefined || etag === '' || etag.startsWith('W/')) return undefined
  return etag
}

/** The `Content-Length` of an identity-coded response, or undefined. */
export function declaredLength(response: Response): number | undefined {
  if (
    response.headers.has('content-encoding') &&
    response.headers.get('content-encoding') !== 'identity'
  )
    return undefined
  const text = response.headers.get('content-length')
  return text !== null && /^\d+$/.test(text.trim()) ? Number(text) : undefined
}

/** Throw a fatal failure unless `response` holds exactly bytes `first`-`last` of `total`. */
export function checkRange(response: Response, first: number, last: number, total: number): void {
  const range = parseContentRange(response.headers.get('content-range'))
  if (range === undefined || range.first !== first || range.last !== last || range.total !== total)
    throw fatal(
      `the server answered bytes ${first}-${last}/${total} with Content-Range "${response.headers.get('content-range') ?? ''}"`,
    )
}
