import { IsoagentError } from '../../errors.ts'
import { READ_ONLY, type ToolSpec } from '../../kernel/tool-spec.ts'
import type { NetContext } from '../../net/http-transport.ts'
import { httpStatusError, readCapped, withDeadline } from '../../net/http-failure.ts'
import { safeFetch, typedFetchError } from '../../net/safe-fetch.ts'
import { redactUrl } from '../../net/url-rules.ts'
import { toolSuccess } from '../../tool-result.ts'
import { decodeBody } from './charset.ts'
import type { PageFormat } from './html-convert.ts'

/** Largest body read, in bytes; the rest of a longer body is not read. */
export const WEB_FETCH_MAX_BODY_BYTES = 5 * 1024 * 1024
/** Deadline of a fetch, in seconds. */
export const WEB_FETCH_TIMEOUT_S = { default: 30, max: 120 } as const
/** Characters of rendered content returned by one call. */
export const WEB_FETCH_MAX_CHARS = { default: 50_000, max: 100_000 } as const

/** Arguments of `web_fetch`. */
export interface WebFetchArgs {
  url: string
  format?: PageFormat
  timeout?: number
  body_only?: boolean
  offset?: number
  max_chars?: number
}

interface Rendered {
  content: string
  url: string
  status: number
  contentType: string
  charset: string
  bodyBytes: number
  bodyTruncated: boolean
  addressCheck: string
  redirects: number
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i
const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|ld\+json|rss\+xml|atom\+xml|x-ndjson|yaml|x-yaml|toml)\b|[^;]*\+(json|xml)\b)/i

function looksHtml(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 512)).trimStart().toLowerCase()
  return head.startsWith('<!doctype html') || head.startsWith('<html')
}

async function fetchAndRender(
  args: WebFetchArgs,
  net: NetContext,
  signal: AbortSignal,
): Promise<Rendered> {
  const format = args.format ?? 'markdown'
  const { response, finalUrl, addressCheck, redirects } = await safeFetch(
    args.url,
    {
      signal,
      headers: {
        accept:
          format === 'html'
            ? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5'
            : 'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5',
      },
    },
    net,
  )
  const failure = httpStatusError(response, finalUrl.host)
  if (failure !== undefined) {
    await response.body?.cancel().catch(() => undefined)
    throw failure
  }
  const contentType = response.headers.get('content-type') ?? ''
  let body
  try {
    body = await readCapped(response.body, WEB_FETCH_MAX_BODY_BYTES)
  } catch (error) {
    if (signal.aborted) throw typedFetchError(error, finalUrl, signal)
    throw new IsoagentError('transport', `reading the body of ${finalUrl.host} failed`, {
      cause: error,
    })
  }
  const html = HTML_TYPES.test(contentType) || (contentType === '' && looksHtml(body.bytes))
  if (!html && contentType !== '' && !TEXT_TYPES.test(contentType)) {
    throw new IsoagentError(
      'unsupported',
      `${finalUrl.host} sent ${contentType.split(';')[0]}, which web_fetch does not render; use download for files`,
      { data: { content_type: contentType } },
    )
  }
  const decoded = decodeBody(body.bytes, contentType || null, html)
  // The HTML converter (and its parser and entity tables) loads at the first page that needs it.
  const content = html
    ? (await import('./html-convert.ts')).convertHtml(
        decoded.text,
        finalUrl,
        format,
        args.body_only === true,
      )
    : decoded.text
  return {
    content,
    url: redactUrl(finalUrl),
    status: response.status,
    contentType: contentType.split(';')[0]?.trim() ?? '',
    charset: decoded.charset,
    bodyBytes: body.bytes.length,
    bodyTruncated: body.truncated,
    addressCheck,
    redirects,
  }
}

function sliceEnd(text: string, offset: number, max: number): number {
  let end = Math.min(text.length, offset + max)
  const code = text.charCodeAt(end - 1)
  if (end < text.length && end > offset + 1 && code >= 0xd800 && code <= 0xdbff) end--
  return end
}

/** The `web_fetch` tool over `net` (the session's network options). */
export function createWebFetchTool(net: NetContext = {}): ToolSpec<WebFetchArgs> {
  return {
    name: 'web_fetch',
    pathArguments: [],
    description:
      'Fetch a public web page (http/https) and return it as Markdown (default), plain text or HTML; ' +
      '`body_only` keeps the main content without navigation, headers, footers and sidebars. Long pages ' +
      'come in parts of `max_chars`: continue with `offset` = metadata.next_offset. Bodies are read up to 5 MB. ' +
      'Private, loopback and link-local addresses are refused.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 8192,
          description: 'http(s) URL of the page.',
        },
        format: {
          type: 'string',
          enum: ['markdown', 'text', 'html'],
          description:
            'Rendering of an HTML page (default markdown); other text is returned as is.',
        },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: WEB_FETCH_TIMEOUT_S.max,
          description: `Seconds (default ${WEB_FETCH_TIMEOUT_S.default}, max ${WEB_FETCH_TIMEOUT_S.max}).`,
        },
        body_only: {
          type: 'boolean',
          description: 'Main content only, without navigation and boilerplate (default false).',
        },
        offset: {
          type: 'integer',
          minimum: 0,
          description:
            'Character offset into the rendered content (default 0): metadata.next_offset.',
        },
        max_chars: {
          type: 'integer',
          minimum: 1,
          maximum: WEB_FETCH_MAX_CHARS.max,
          description: `Characters returned (default ${WEB_FETCH_MAX_CHARS.default}, max ${WEB_FETCH_MAX_CHARS.max}).`,
        },
      },
    },
    available: () => true,
    scheduling: { ...READ_ONLY, supports_pagination: true, max_parallelism: 8 },
    primaryArgument: 'url',
    redactArgs: (args) => ({ ...args, url: redactUrl(args.url) }),
    ownDeadlineMs: (args) => (args.timeout ?? WEB_FETCH_TIMEOUT_S.default) * 1000,
    async run(args, context) {
      const format = args.format ?? 'markdown'
      const bodyOnly = args.body_only === true
      const offset = args.offset ?? 0
      const maxChars = args.max_chars ?? WEB_FETCH_MAX_CHARS.default
      const timeoutMs = (args.timeout ?? WEB_FETCH_TIMEOUT_S.default) * 1000
      const key = `web_fetch\0${args.url}\0${format}\0${bodyOnly}`
      let page = offset > 0 ? (context.carryover.take(key) as Rendered | undefined) : undefined
      if (page === undefined) {
        const signal = withDeadline(context.signal, timeoutMs)
        try {
          page = await fetchAndRender(args, net, signal)
        } catch (error) {
          if (IsoagentError.is(error, 'timeout'))
            throw new IsoagentError(
              'timeout',
              `web_fetch of ${redactUrl(args.url)} took longer than ${timeoutMs / 1000} s`,
              {
                data: { duration_ms: timeoutMs },
              },
            )
          throw error
        }
      }
      const total = page.content.length
      if (offset > total)
        throw new IsoagentError(
          'invalid_argument',
          `offset ${offset} is past the end of the content (${total} characters)`,
        )
      const end = sliceEnd(page.content, offset, maxChars)
      const next = end < total ? end : null
      if (next !== null) context.carryover.keep(key, page, () => undefined)
      const slice = page.content.slice(offset, end)
      const output =
        next === null
          ? slice
          : `${slice}\n\n[web_fetch: ${total - end} more characters; continue with offset=${next}]`
      return toolSuccess('web_fetch', output, {
        url: page.url,
        status: page.status,
        content_type: page.contentType,
        charset: page.charset,
        format,
        body_only: bodyOnly,
        offset,
        returned_chars: end - offset,
        total_chars: total,
        next_offset: next,
        truncated: next !== null,
        body_bytes: page.bodyBytes,
        body_truncated: page.bodyTruncated,
        redirects: page.redirects,
        address_check: page.addressCheck,
      })
    },
  }
}

/** `web_fetch` with the default network options. */
export const webFetchTool = createWebFetchTool()
