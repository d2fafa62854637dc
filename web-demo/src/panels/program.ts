import { field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'

const EXAMPLE = `// inputs is the JSON below; ctx.tool(name, args), ctx.readFile, ctx.grep, ctx.glob call back
// into the session's tools (governed, like a model's calls).
const files = await ctx.glob('**/*')
return { files: files.length, first: files.slice(0, 5), doubled: inputs.n * 2 }
`

/** A program editor: JavaScript run by the `program` tool (QuickJS) with JSON `inputs`. */
export function programPanel(): Panel {
  return {
    id: 'program',
    title: 'Program',
    render(ctx: DemoContext) {
      const source = h('textarea', { id: 'program-source', rows: 10, spellcheck: 'false' })
      source.value = EXAMPLE
      const inputs = h('textarea', { id: 'program-inputs', rows: 3, spellcheck: 'false' })
      inputs.value = '{ "n": 21 }'
      const allowed = h('input', {
        id: 'program-tools',
        type: 'text',
        placeholder: 'all but program',
      })
      const value = h('div', {
        id: 'program-value',
        'aria-live': 'polite',
        'data-empty-hint':
          'Run program: the script runs in QuickJS, calls the session’s tools through ctx, and its value shows here.',
      })
      const run = async () => {
        let parsed: unknown
        try {
          parsed = inputs.value.trim() ? JSON.parse(inputs.value) : null
        } catch (error) {
          return replace(
            value,
            h(
              'p',
              { class: 'failed', role: 'alert' },
              `inputs is not JSON: ${(error as Error).message}`,
            ),
          )
        }
        const tools = allowed.value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
        replace(value, 'Running (QuickJS loads on the first run)…')
        const result = await ctx.client.call('program', {
          type: 'script',
          language: 'javascript',
          source: source.value,
          inputs: parsed,
          ...(tools.length ? { allowed_tools: tools } : {}),
        })
        const meta = result.metadata ?? {}
        replace(
          value,
          resultView(result, { output: result.exitCode !== 0 }),
          result.exitCode === 0
            ? h(
                'pre',
                { id: 'program-result', class: 'output', tabindex: 0 },
                JSON.stringify(meta.value, null, 2),
              )
            : null,
          meta.tool_calls !== undefined
            ? h('p', {}, `${String(meta.tool_calls)} tool calls, ${String(meta.duration_ms)} ms`)
            : null,
          Array.isArray(meta.logs) && meta.logs.length
            ? h('pre', { class: 'logs' }, meta.logs.map((l) => JSON.stringify(l)).join('\n'))
            : null,
        )
      }
      if (!ctx.has('program'))
        return h(
          'section',
          { class: 'panel-body' },
          h('h2', {}, 'Program'),
          h('p', {}, 'This session has no program tool.'),
        )
      return h(
        'section',
        { class: 'panel-body' },
        h('h2', {}, 'Program'),
        field('Source (JavaScript)', source),
        field('inputs (JSON)', inputs),
        field('Allowed tools (comma separated)', allowed),
        h(
          'button',
          { type: 'button', id: 'program-run', onclick: () => void run() },
          'Run program',
        ),
        value,
      )
    },
  }
}
