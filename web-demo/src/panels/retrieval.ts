import type { RetrievalStatus } from '../../../adapters/browser/index.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import {
  loadEmbeddingsSettings,
  saveEmbeddingsSettings,
  type EmbeddingsSettings,
} from '../embeddings-settings.ts'
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
 * The in-tab embedder form: an OpenAI-compatible `/embeddings` endpoint, model and key kept in
 * this tab's `sessionStorage`; **Use** saves them and reloads (a session gets its embedder when
 * it opens), **Remove** forgets them.
 */
function tabEmbedderForm(): HTMLElement {
  const saved = loadEmbeddingsSettings()
  const url = h('input', {
    id: 'embed-url',
    type: 'url',
    placeholder: 'https://api.openai.com/v1',
    value: saved?.baseURL ?? '',
  })
  const model = h('input', {
    id: 'embed-model',
    type: 'text',
    placeholder: 'text-embedding-3-small',
    value: saved?.model ?? '',
  })
  const key = h('input', {
    id: 'embed-key',
    type: 'password',
    autocomplete: 'off',
    value: saved?.apiKey ?? '',
  })
  const problem = h('div', { id: 'embed-error', 'aria-live': 'assertive' })
  const use = () => {
    const settings: EmbeddingsSettings = {
      baseURL: url.value.trim(),
      model: model.value.trim(),
      apiKey: key.value,
    }
    if (!/^https?:\/\//.test(settings.baseURL) || settings.model === '')
      return replace(problem, note('missing', 'Enter an http(s) base URL and a model name.'))
    saveEmbeddingsSettings(settings)
    location.reload()
  }
  const remove = () => {
    saveEmbeddingsSettings(undefined)
    location.reload()
  }
  return block(
    'Embeddings endpoint (this tab only)',
    field(
      'Base URL (OpenAI-compatible, POST …/embeddings)',
      url,
      'It must allow this page’s origin (CORS).',
    ),
    field('Model', model),
    field('API key (kept in this tab only, sent only to the endpoint)', key),
    h(
      'div',
      { class: 'row wrap' },
      h('button', { type: 'button', id: 'embed-use', onclick: use }, 'Use this embedder (reloads)'),
      saved ? h('button', { type: 'button', id: 'embed-remove', onclick: remove }, 'Remove') : null,
    ),
    problem,
  )
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
          ctx.client.mode === 'tab' ? tabEmbedderForm() : null,
        ],
      })
      if (!enabled)
        say(
          status,
          note(
            'missing',
            'No embeddings provider is configured for this session, so semantic and hybrid ' +
              'answer with the typed error of the search tool ("this session did not enable ' +
              'semantic retrieval"). ' +
              (ctx.client.mode === 'tab'
                ? 'Give this tab an OpenAI-compatible embeddings endpoint below'
                : 'A server enables them with isoagent serve --embeddings-url URL ' +
                  '--embeddings-model M') +
              '; grep works everywhere.',
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
