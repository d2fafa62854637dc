import type { Extension } from '@codemirror/state'

type Loader = () => Promise<Extension>

const javascript =
  (options: { typescript?: boolean; jsx?: boolean }): Loader =>
  async () =>
    (await import('@codemirror/lang-javascript')).javascript(options)

/**
 * The languages the editor highlights, by file extension. Each is a dynamic import: a language
 * is fetched the first time a file of its kind opens, never with the page.
 */
const LOADERS: Record<string, { name: string; load: Loader }> = {
  ts: { name: 'typescript', load: javascript({ typescript: true }) },
  mts: { name: 'typescript', load: javascript({ typescript: true }) },
  cts: { name: 'typescript', load: javascript({ typescript: true }) },
  tsx: { name: 'typescript', load: javascript({ typescript: true, jsx: true }) },
  js: { name: 'javascript', load: javascript({}) },
  mjs: { name: 'javascript', load: javascript({}) },
  cjs: { name: 'javascript', load: javascript({}) },
  jsx: { name: 'javascript', load: javascript({ jsx: true }) },
  json: { name: 'json', load: async () => (await import('@codemirror/lang-json')).json() },
  md: {
    name: 'markdown',
    load: async () => (await import('@codemirror/lang-markdown')).markdown(),
  },
  markdown: {
    name: 'markdown',
    load: async () => (await import('@codemirror/lang-markdown')).markdown(),
  },
  css: { name: 'css', load: async () => (await import('@codemirror/lang-css')).css() },
  html: { name: 'html', load: async () => (await import('@codemirror/lang-html')).html() },
  htm: { name: 'html', load: async () => (await import('@codemirror/lang-html')).html() },
  py: { name: 'python', load: async () => (await import('@codemirror/lang-python')).python() },
}

/** The language of `path` (by its extension), or `undefined` for plain text. */
export function languageOf(path: string): { name: string; load: Loader } | undefined {
  const dot = path.lastIndexOf('.')
  if (dot < 0 || dot < path.lastIndexOf('/')) return undefined
  return LOADERS[path.slice(dot + 1).toLowerCase()]
}
