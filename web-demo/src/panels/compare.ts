import type { ToolResult } from '../../../adapters/browser/index.ts'
import { errorType, resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import type { ClientMode, ToolClient } from '../tool-client.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'

const PRESETS: { label: string; tool: string; args: Record<string, unknown> }[] = [
  { label: 'ls the root', tool: 'ls', args: { path: '.' } },
  { label: 'read README.md', tool: 'read', args: { file_path: 'README.md' } },
  { label: 'grep "TODO"', tool: 'search', args: { mode: 'grep', query: 'TODO' } },
  { label: 'glob **/*.md', tool: 'search', args: { mode: 'glob', query: '**/*.md' } },
]

/** The token of the page URL (`isoagent serve` prints `/?token=...`); empty without one. */
function pageToken(): string {
  return new URLSearchParams(location.search).get('token') ?? ''
}

/** Whether the page was served by `isoagent serve` with a token (so its HTTP API is reachable). */
export function serverReachable(): boolean {
  return pageToken() !== '' && location.protocol.startsWith('http')
}

/** Open a client of the other mode for one comparison; closed again after it. */
async function openOther(mode: ClientMode): Promise<ToolClient> {
  if (mode === 'tab') {
    const { HttpClient } = await import('../http-client.ts')
    return HttpClient.open(location.href, pageToken())
  }
  const { TabClient } = await import('../tab-client.ts')
  return TabClient.open()
}

/** Where two results differ: exit code, error kind, or the first line of output that differs. */
export function difference(a: ToolResult, b: ToolResult): string | undefined {
  if (a.exitCode !== b.exitCode) return `exitCode ${a.exitCode} vs ${b.exitCode}`
  if (errorType(a) !== errorType(b)) return `error kind ${errorType(a)} vs ${errorType(b)}`
  if (a.output === b.output) return undefined
  const left = a.output.split('\n')
  const right = b.output.split('\n')
  const at = left.findIndex((line, i) => line !== right[i])
  const line = at < 0 ? left.length : at
  return `output differs from line ${line + 1}: ${JSON.stringify(left[line] ?? '(end)')} vs ${JSON.stringify(right[line] ?? '(end)')}`
}

/** One side of the comparison: where it ran and its result. */
function side(id: ClientMode, title: string, result: ToolResult | string): HTMLElement {
  return h(
    'div',
    { class: 'compare-side', id: `compare-${id}`, 'data-side': id },
    h('h4', {}, title),
    typeof result === 'string' ? note('missing', result) : resultView(result),
  )
}

/**
 * "Same call, tab vs server": one tool call run by the session in this tab (IndexedDB) and by
 * a session of the server's HTTP API, side by side, and whether the two results match. The
 * same tool code answers both; only the workspace port differs.
 */
export function comparePanel(): Panel {
  return {
    id: 'compare',
    title: 'Tab vs server',
    render(ctx: DemoContext) {
      const tool = h(
        'select',
        { id: 'compare-tool' },
        ...ctx.tools.map((t) => h('option', { value: t.name }, t.name)),
      )
      tool.value = ctx.has('read') ? 'read' : (ctx.tools[0]?.name ?? '')
      const args = h('textarea', { id: 'compare-args', rows: 3, spellcheck: 'false' })
      args.value = JSON.stringify(PRESETS[1]!.args)
      const out = h('div', { id: 'compare-result', class: 'compare', 'aria-live': 'polite' })
      const verdict = h('div', { id: 'compare-verdict', 'aria-live': 'polite' })
      const presets = h(
        'div',
        { class: 'row wrap' },
        ...PRESETS.filter((p) => ctx.has(p.tool)).map((p) =>
          h(
            'button',
            {
              type: 'button',
              class: 'compare-preset',
              onclick: () => {
                tool.value = p.tool
                args.value = JSON.stringify(p.args)
              },
            },
            p.label,
          ),
        ),
      )
      const reachable = serverReachable()
      const { el, status } = capabilityLayout({
        id: 'compare',
        title: 'Same call, tab vs server',
        intro:
          'One call, run by the session in this tab (IndexedDB) and by a session of the server ' +
          "(its HTTP API, the server's disk): the same tools answer both. Both workspaces start " +
          'from the sample project with npm start; a change made in one is not in the other.',
        body: [
          block(
            'The call',
            presets,
            field('Tool', tool),
            field('Arguments (JSON)', args),
            h(
              'button',
              { type: 'button', id: 'compare-run', onclick: () => void run() },
              'Run in both',
            ),
          ),
          verdict,
          out,
        ],
      })
      if (!reachable)
        say(
          status,
          note(
            'missing',
            'The server side needs a server: open the URL that `isoagent serve` (or `npm start`) ' +
              'prints, with its ?token=. Until then only the tab side runs.',
          ),
        )
      const run = async () => {
        let parsed: Record<string, unknown>
        try {
          parsed = JSON.parse(args.value) as Record<string, unknown>
        } catch (error) {
          return replace(
            verdict,
            note('missing', `Arguments are not JSON: ${(error as Error).message}`),
          )
        }
        replace(out)
        replace(verdict, note('info', 'Running in both…'))
        const name = tool.value
        const here = ctx.client.call(name, parsed)
        const there: Promise<ToolResult | string> = reachable
          ? openOther(ctx.client.mode)
              .then(async (other) => {
                try {
                  return await other.call(name, parsed)
                } finally {
                  await other.close().catch(() => undefined)
                }
              })
              .catch((error: Error) => `Could not open the other workspace: ${error.message}`)
          : Promise.resolve('No server: open the URL isoagent serve prints.')
        const [mine, theirs] = await Promise.all([here, there])
        const tab = ctx.client.mode === 'tab' ? mine : theirs
        const server = ctx.client.mode === 'tab' ? theirs : mine
        replace(
          out,
          side('tab', 'This tab (IndexedDB)', tab),
          side('server', 'Server (HTTP API)', server),
        )
        if (typeof tab === 'string' || typeof server === 'string') {
          verdict.dataset.match = 'incomplete'
          return replace(verdict, note('warn', 'Only one side ran.'))
        }
        const diff = difference(tab, server)
        verdict.dataset.match = diff === undefined ? 'same' : 'different'
        replace(
          verdict,
          diff === undefined
            ? note('hint', '✓ Same result in the tab and on the server.')
            : note('warn', `The results differ: ${diff}.`),
        )
      }
      return el
    },
  }
}
