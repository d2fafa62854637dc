import { field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import { schemaForm, type SchemaForm } from '../schema-form.ts'

/** A console for any tool: the form generated from its JSON Schema, or raw JSON arguments. */
export function toolConsolePanel(): Panel {
  return {
    id: 'console',
    title: 'Tool console',
    render(ctx: DemoContext) {
      const list = h('ul', {
        id: 'tool-list',
        class: 'tool-list',
        'aria-label': 'Tools of this session',
      })
      const select = h('select', { id: 'console-tool' })
      const count = h('h3', {})
      /** (Re)list the session's tools, keeping the picked one when it is still there. */
      const listTools = () => {
        const picked = select.value
        replace(list, ...ctx.tools.map((t) => h('li', { 'data-tool': t.name }, t.name)))
        replace(select, ...ctx.tools.map((t) => h('option', { value: t.name }, t.name)))
        count.textContent = `Tools (${ctx.tools.length})`
        if (ctx.tools.some((t) => t.name === picked)) select.value = picked
        return picked
      }
      listTools()
      const description = h('p', { class: 'tool-description' })
      const formHost = h('div', {})
      const raw = h('textarea', {
        id: 'console-json',
        rows: 6,
        spellcheck: 'false',
        'aria-label': 'Arguments as JSON',
      })
      const rawMode = h('input', { id: 'console-raw', type: 'checkbox' })
      const out = h('div', {
        id: 'console-result',
        'aria-live': 'polite',
        'data-empty-hint':
          'Pick a tool, fill in its arguments (the form follows its JSON Schema), then Run: the whole result shows here.',
      })
      let form: SchemaForm | undefined

      const pick = () => {
        const def = ctx.tools.find((t) => t.name === select.value)
        if (!def) return
        description.textContent = def.description
        form = schemaForm(def.parameters, `arg-${def.name}`)
        replace(formHost, form.el)
        raw.value = '{}'
        replace(out)
      }
      const sync = () => {
        if (!form) return
        if (rawMode.checked) {
          try {
            raw.value = JSON.stringify(form.read(), null, 2)
          } catch {
            /* leave the JSON as it is */
          }
        } else {
          try {
            form.write(JSON.parse(raw.value || '{}') as Record<string, unknown>)
          } catch {
            /* invalid JSON: the form keeps its values */
          }
        }
        formHost.hidden = rawMode.checked
        raw.hidden = !rawMode.checked
      }
      select.addEventListener('change', pick)
      rawMode.addEventListener('change', sync)
      raw.hidden = true

      const run = async () => {
        let args: Record<string, unknown>
        try {
          args = rawMode.checked
            ? (JSON.parse(raw.value || '{}') as Record<string, unknown>)
            : form!.read()
        } catch (error) {
          return replace(out, h('p', { class: 'failed', role: 'alert' }, (error as Error).message))
        }
        replace(out, `Running ${select.value}…`)
        const result = await ctx.client.call(select.value, args)
        replace(
          out,
          resultView(result),
          h(
            'details',
            {},
            h('summary', {}, 'Whole result (JSON)'),
            h('pre', { class: 'output' }, JSON.stringify(result, null, 2)),
          ),
        )
      }
      pick()
      ctx.onToolsChanged(() => {
        if (listTools() !== select.value) pick()
      })
      return h(
        'section',
        { class: 'panel-body' },
        h('h2', {}, 'Tool console'),
        count,
        list,
        h(
          'form',
          {
            onsubmit: (e: Event) => {
              e.preventDefault()
              void run()
            },
          },
          h('div', { class: 'row wrap' }, field('Tool', select), field('Raw JSON', rawMode)),
          description,
          formHost,
          raw,
          h('button', { type: 'submit', id: 'console-run' }, 'Run'),
        ),
        out,
      )
    },
  }
}
