import type { RetrievalStatus } from '../../../adapters/browser/index.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'
import { sessionState } from './session-state.ts'

const MODES = ['semantic', 'hybrid', 'grep'] as const

/** The index's progress: phase, coverage, files and chunks, the embedder. */
function statusView(s: RetrievalStatus): HTMLElement {
  return note(
    'info',
    `Index ${s.phase}: ${s.indexedFiles} of ${s.eligibleFiles} files ` +
      `(${(s.coverageBps / 100).toFixed(1)}%), ${s.indexedChunks} chunks, ` +
      `${s.queueDepth} queued, ${s.failedFiles} failed · embedder ${s.model.provider} ` +
      `${s.model.model} (${s.model.dimension} dims)`,
  )
}

/** Whether the session's `search` schema lists `mode` (the modes it was opened with). */
function offersMode(ctx: DemoContext, mode: string): boolean {
  const def = ctx.tools.find((t) => t.name === 'search')
  const modes = (def?.parameters as { properties?: { mode?: { enum?: string[] } } } | undefined)
    ?.properties?.mode?.enum
  return modes?.includes(mode) ?? false
}

/**
 * Semantic and hybrid search: `search` in mode `semantic` (exact cosine over the session's
 * embedded chunks) or `hybrid` (exact, lexical, symbol and semantic evidence fused, every hit
 * re-checked), beside `grep`. Without an embeddings provider the two modes answer with the
 * tool's typed error, and the panel says so.
 */
export function retrievalPanel(): Panel {
  return {
    id: 'retrieval',
    title: 'Semantic search',
    render(ctx: DemoContext) {
      const enabled = offersMode(ctx, 'semantic')
      const mode = h(
        'select',
        { id: 'retrieval-mode' },
        ...MODES.map((m) => h('option', { value: m }, m)),
      )
      mode.value = enabled ? 'hybrid' : 'grep'
      const query = h('input', {
        id: 'retrieval-query',
        type: 'search',
        placeholder: 'e.g. where is the session closed',
      })
      const out = h('div', { id: 'retrieval-result', 'aria-live': 'polite' })
      const progress = h('div', { id: 'retrieval-progress' })
      const { el, status } = capabilityLayout({
        id: 'retrieval',
        title: 'Semantic and hybrid search',
        intro:
          'semantic ranks 80-line chunks by meaning (an embeddings model), hybrid fuses exact, ' +
          'lexical, symbol and semantic evidence and re-checks every hit against the current ' +
          'file; grep is the exact baseline.',
        body: [
          progress,
          block(
            'Search',
            field('Mode', mode),
            field('Query', query),
            h(
              'button',
              { type: 'button', id: 'retrieval-run', onclick: () => void run() },
              'Search',
            ),
            out,
          ),
        ],
      })
      if (!enabled)
        say(
          status,
          note(
            'missing',
            'No embeddings provider is configured for this session, so semantic and hybrid ' +
              'answer with the typed error of the search tool ("this session did not enable ' +
              'semantic retrieval"). A server enables them with isoagent serve --embeddings-url ' +
              'URL --embeddings-model M; grep works everywhere.',
          ),
        )
      const refresh = async () => {
        const answer = await sessionState(ctx.client).retrieval()
        replace(
          progress,
          answer.ok ? statusView(answer.value) : enabled ? note('missing', answer.message) : null,
        )
      }
      const run = async () => {
        if (query.value.trim() === '') return replace(out, note('hint', 'Type a query first.'))
        replace(out, note('info', `Searching (${mode.value})…`))
        const result = await ctx.client.call('search', { mode: mode.value, query: query.value })
        replace(out, resultView(result))
        if (enabled) void refresh()
      }
      if (enabled) void refresh()
      return el
    },
  }
}
