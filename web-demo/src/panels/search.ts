import { field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'

const GREP_LINE = /^(.+?):(\d+):(.*)$/

interface Hit {
  path: string
  line?: number
  text: string
}

/** Search: grep, glob or bm25; every hit opens the file at its line. Pages via `next_cursor`. */
export function searchPanel(): Panel {
  return {
    id: 'search',
    title: 'Search',
    render(ctx: DemoContext) {
      const mode = h(
        'select',
        { id: 'search-mode' },
        h('option', { value: 'grep' }, 'grep (regex)'),
        h('option', { value: 'glob' }, 'glob (paths)'),
        h('option', { value: 'bm25' }, 'bm25 (ranked words)'),
      )
      const query = h('input', { id: 'search-query', type: 'search', required: true })
      const path = h('input', { id: 'search-path', type: 'text', placeholder: '.' })
      const include = h('input', { id: 'search-include', type: 'text', placeholder: '*.ts' })
      const caseInsensitive = h('input', { id: 'search-icase', type: 'checkbox' })
      const results = h('ol', { id: 'search-results', class: 'hits' })
      const summary = h('div', {
        id: 'search-summary',
        'aria-live': 'polite',
        'data-empty-hint':
          'Type a word and press Search: try slugify (grep), *.ts (glob) or “cut at a word boundary” (bm25). A hit opens the file at its line.',
      })

      const hitsOf = (m: string, output: string, meta: Record<string, unknown>): Hit[] => {
        if (m === 'glob') return ((meta.paths as string[]) ?? []).map((p) => ({ path: p, text: p }))
        if (m === 'bm25')
          return ((meta.hits as { path: string; start_line: number; score: number }[]) ?? []).map(
            (x) => ({ path: x.path, line: x.start_line, text: `score ${x.score.toFixed(3)}` }),
          )
        return output
          .split('\n')
          .map((l) => GREP_LINE.exec(l))
          .filter((x): x is RegExpExecArray => x !== null)
          .map((x) => ({ path: x[1]!, line: Number(x[2]), text: x[3]! }))
      }

      const run = async (cursor?: string) => {
        if (!cursor) replace(results)
        const m = mode.value
        const args: Record<string, unknown> = { mode: m, query: query.value }
        if (path.value.trim()) args.path = path.value.trim()
        if (include.value.trim()) args.include = include.value.trim()
        if (m === 'grep' && caseInsensitive.checked) args.case_sensitive = false
        if (cursor) args.cursor = cursor
        summary.textContent = 'Searching…'
        const result = await ctx.client.call('search', args)
        if (result.exitCode !== 0) return replace(summary, resultView(result))
        const meta = result.metadata ?? {}
        const hits = hitsOf(m, result.output, meta)
        for (const hit of hits) {
          results.append(
            h(
              'li',
              {},
              h(
                'button',
                {
                  class: 'hit',
                  'data-path': hit.path,
                  'data-line': hit.line,
                  onclick: () => ctx.openFile(hit.path, hit.line),
                },
                h('span', { class: 'hit-loc' }, hit.line ? `${hit.path}:${hit.line}` : hit.path),
                hit.text !== hit.path ? h('span', { class: 'hit-text' }, hit.text) : null,
              ),
            ),
          )
        }
        const next = meta.next_cursor as string | null | undefined
        replace(
          summary,
          `${results.children.length} result${results.children.length === 1 ? '' : 's'}`,
          meta.files_scanned !== undefined ? ` (${String(meta.files_scanned)} files scanned)` : '',
          results.children.length === 0
            ? ' · no match: try another word, ignore case, or a wider path.'
            : '',
          next
            ? h(
                'button',
                { type: 'button', id: 'search-more', onclick: () => void run(next) },
                'More results',
              )
            : '',
        )
      }

      return h(
        'section',
        { class: 'panel-body' },
        h('h2', {}, 'Search'),
        h(
          'form',
          {
            class: 'row wrap',
            onsubmit: (e: Event) => {
              e.preventDefault()
              void run()
            },
          },
          field('Mode', mode),
          field('Query', query),
          field('Path', path),
          field('Include', include),
          field('Ignore case', caseInsensitive),
          h('button', { type: 'submit', id: 'search-run' }, 'Search'),
        ),
        summary,
        results,
      )
    },
  }
}
