import { NodeHtmlMarkdown, type TranslatorConfigFactory } from 'node-html-markdown'
import { HTMLElement, parse, TextNode } from 'node-html-parser'

/** What `web_fetch` renders a page as. */
export type PageFormat = 'markdown' | 'text' | 'html'

let base: URL | undefined

function absolute(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || base === undefined) return value
  if (/^\s*(javascript|vbscript|data):/i.test(value))
    return value.startsWith('data:') ? value : undefined
  try {
    return new URL(value.trim(), base).href
  } catch {
    return value
  }
}

function rewriting(attribute: string, inner: TranslatorConfigFactory): TranslatorConfigFactory {
  return (ctx) => {
    const node = ctx.node as unknown as HTMLElement
    const next = absolute(node.getAttribute(attribute))
    if (next === undefined) node.removeAttribute(attribute)
    else node.setAttribute(attribute, next)
    return inner(ctx)
  }
}

const defaults = new NodeHtmlMarkdown()
const converter = new NodeHtmlMarkdown(
  { codeBlockStyle: 'fenced', maxConsecutiveNewlines: 2 },
  {
    a: rewriting('href', defaults.translators.get('a') as TranslatorConfigFactory),
    img: rewriting('src', defaults.translators.get('img') as TranslatorConfigFactory),
  },
)

/**
 * The free Node global node-html-markdown's perf hooks read (its `env.LOG_PERF`). The core uses
 * no Node global itself; this names the one a library needs, to stand it in where it is absent.
 */
const NODE_GLOBAL = 'process'

/**
 * Run node-html-markdown's `translate`. workerd and browsers have no {@link NODE_GLOBAL}: while
 * the (synchronous) call runs, such a runtime gets a bare `{ env: {} }` in its place, removed
 * right after, so no other code sees it. (Upstream could read it through `globalThis`.)
 */
function translate(html: string): string {
  const g = globalThis as Record<string, unknown>
  if (g[NODE_GLOBAL] !== undefined) return converter.translate(html)
  g[NODE_GLOBAL] = { env: {} }
  try {
    return converter.translate(html)
  } finally {
    delete g[NODE_GLOBAL]
  }
}

const BOILERPLATE_TAGS =
  'script, style, noscript, template, nav, header, footer, aside, form, iframe, svg, button, dialog, ' +
  '[role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=search], [aria-hidden=true]'
const BOILERPLATE_NAMES =
  /(^|[\s_-])(nav|navbar|navigation|menu|sidebar|side-bar|footer|header|masthead|breadcrumbs?|cookies?|consent|banner|ads?|advert\w*|promo|social|share|sharing|related|comments?|skip-link|toc)([\s_-]|$)/i

function mainContent(root: HTMLElement): HTMLElement {
  const main = root.querySelector('main') ?? root.querySelector('[role=main]')
  const articles = root.querySelectorAll('article')
  const container =
    main ??
    (articles.length > 0
      ? articles.reduce((a, b) => (b.textContent.length > a.textContent.length ? b : a))
      : (root.querySelector('body') ?? root))
  for (const el of container.querySelectorAll(BOILERPLATE_TAGS)) el.remove()
  for (const el of container.querySelectorAll('div, section, ul, ol, p, span, table')) {
    const names = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`
    if (BOILERPLATE_NAMES.test(names)) el.remove()
  }
  return container
}

function absolutizeTree(root: HTMLElement): void {
  for (const [selector, attribute] of [
    ['a[href]', 'href'],
    ['img[src]', 'src'],
  ] as const) {
    for (const el of root.querySelectorAll(selector)) {
      const next = absolute(el.getAttribute(attribute))
      if (next === undefined) el.removeAttribute(attribute)
      else el.setAttribute(attribute, next)
    }
  }
}

function baseOf(root: HTMLElement | undefined, html: string, pageUrl: URL): URL {
  const href =
    root?.querySelector('base[href]')?.getAttribute('href') ??
    /<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)/i.exec(html.slice(0, 65536))?.[1]
  if (href === undefined) return pageUrl
  try {
    return new URL(href, pageUrl)
  } catch {
    return pageUrl
  }
}

function plainText(container: HTMLElement): string {
  for (const cell of container.querySelectorAll('td, th')) {
    if (cell.nextElementSibling !== null) cell.appendChild(new TextNode(' | ', cell))
  }
  return container.structuredText
}

/** HTML converted by one `translate` call, at most (about). */
const CHUNK_CHARS = 32 * 1024
const CONTAINERS = new Set([
  'html',
  'body',
  'main',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'aside',
  'nav',
])
const BLOCKS = new Set([
  ...CONTAINERS,
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'pre',
  'ul',
  'ol',
  'dl',
  'blockquote',
  'hr',
  'figure',
  'form',
  'fieldset',
  'details',
  'address',
])

/**
 * The pieces of `node` to convert one at a time: node-html-markdown appends to one growing string
 * and reads its end after every append, which costs time quadratic in the output (2 MB of HTML
 * took minutes). Containers larger than a chunk are split into their children, a run of inline
 * content stays in one piece, and pieces are grouped into chunks of about 32 KiB.
 */
function chunks(node: HTMLElement): string[] {
  const out: string[] = []
  let current = ''
  let inline = ''
  const push = (html: string) => {
    if (current.length + html.length > CHUNK_CHARS && current !== '') {
      out.push(current)
      current = ''
    }
    current += html
  }
  const flushInline = () => {
    if (inline !== '') push(`<p>${inline}</p>`)
    inline = ''
  }
  const walk = (el: HTMLElement) => {
    for (const child of el.childNodes) {
      const tag = child instanceof HTMLElement ? child.rawTagName?.toLowerCase() : undefined
      if (tag === undefined || !BLOCKS.has(tag)) {
        inline += child.toString()
        continue
      }
      flushInline()
      const html = child.toString()
      if (html.length > CHUNK_CHARS && CONTAINERS.has(tag)) {
        if (current !== '') {
          out.push(current)
          current = ''
        }
        walk(child as HTMLElement)
        flushInline()
        if (current !== '') {
          out.push(current)
          current = ''
        }
      } else push(html)
    }
  }
  walk(node)
  flushInline()
  if (current !== '') out.push(current)
  return out
}

function markdownOf(container: HTMLElement): string {
  const parts = chunks(container)
    .map((html) => translate(html).trim())
    .filter((m) => m !== '')
  return parts.join('\n\n')
}

/**
 * Render an HTML page as Markdown (node-html-markdown: tables as GFM tables, fenced code
 * blocks), plain text or HTML, links and images made absolute against the page's `<base>` or
 * URL. With `bodyOnly`, only the main content (`<main>`, else the largest `<article>`, else
 * `<body>`) without navigation, headers, footers, asides, forms and boilerplate blocks.
 */
export function convertHtml(
  html: string,
  pageUrl: URL,
  format: PageFormat,
  bodyOnly: boolean,
): string {
  const root = parse(html, {
    lowerCaseTagName: true,
    comment: false,
    blockTextElements: {
      script: true,
      noscript: true,
      style: true,
      ...(format === 'html' ? { pre: true } : {}),
    },
  })
  base = baseOf(root, html, pageUrl)
  try {
    for (const el of root.querySelectorAll('script, style, noscript, template')) {
      if (format !== 'html' || bodyOnly) el.remove()
    }
    const container = bodyOnly ? mainContent(root) : (root.querySelector('body') ?? root)
    if (format === 'markdown') return markdownOf(container)
    absolutizeTree(container)
    if (format === 'html') return bodyOnly ? container.outerHTML : root.toString()
    return plainText(container)
  } finally {
    base = undefined
  }
}
