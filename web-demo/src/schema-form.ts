import type { JsonSchema } from '../../adapters/browser/index.ts'
import { field, h } from './dom.ts'

interface PropSchema {
  type?: string | string[]
  enum?: unknown[]
  description?: string
  default?: unknown
}

/** A form for an object schema: one control per property; `read()` gives the arguments. */
export interface SchemaForm {
  el: HTMLElement
  /** The arguments the controls hold (empty controls are left out); throws on bad JSON. */
  read(): Record<string, unknown>
  /** Put `args` into the controls. */
  write(args: Record<string, unknown>): void
}

/**
 * Generate a form from a tool's JSON Schema: strings as text (long ones as text areas), numbers,
 * booleans as three-way selects (unset/true/false), enums as selects, and anything else
 * (arrays, objects, untyped) as a JSON text area. Required fields are marked.
 */
export function schemaForm(schema: JsonSchema, idPrefix: string): SchemaForm {
  const s = schema as { properties?: Record<string, PropSchema>; required?: string[] }
  const required = new Set(s.required ?? [])
  const readers: Record<string, () => unknown> = {}
  const writers: Record<string, (v: unknown) => void> = {}
  const el = h('div', { class: 'schema-form' })
  for (const [name, prop] of Object.entries(s.properties ?? {})) {
    const id = `${idPrefix}-${name}`
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type
    const label = `${name}${required.has(name) ? ' *' : ''}`
    let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement
    if (prop.enum) {
      control = h('select', { id, 'data-arg': name }, h('option', { value: '' }, '—'))
      for (const v of prop.enum)
        control.append(h('option', { value: JSON.stringify(v) }, String(v)))
      readers[name] = () => (control.value === '' ? undefined : JSON.parse(control.value))
      writers[name] = (v) => (control.value = v === undefined ? '' : JSON.stringify(v))
    } else if (type === 'boolean') {
      control = h(
        'select',
        { id, 'data-arg': name },
        h('option', { value: '' }, '—'),
        h('option', { value: 'true' }, 'true'),
        h('option', { value: 'false' }, 'false'),
      )
      readers[name] = () => (control.value === '' ? undefined : control.value === 'true')
      writers[name] = (v) => (control.value = v === undefined ? '' : String(v))
    } else if (type === 'integer' || type === 'number') {
      control = h('input', {
        id,
        type: 'number',
        'data-arg': name,
        step: type === 'integer' ? 1 : 'any',
      })
      readers[name] = () => (control.value === '' ? undefined : Number(control.value))
      writers[name] = (v) => (control.value = v === undefined ? '' : String(v))
    } else if (type === 'string') {
      const long = /content|source|string|diff|prompt|message|command/.test(name)
      control = long
        ? h('textarea', { id, rows: 3, 'data-arg': name, spellcheck: 'false' })
        : h('input', { id, type: 'text', 'data-arg': name, spellcheck: 'false' })
      readers[name] = () => (control.value === '' ? undefined : control.value)
      writers[name] = (v) => (control.value = v === undefined ? '' : String(v))
    } else {
      control = h('textarea', {
        id,
        rows: 2,
        'data-arg': name,
        spellcheck: 'false',
        placeholder: 'JSON',
      })
      readers[name] = () => {
        if (control.value.trim() === '') return undefined
        try {
          return JSON.parse(control.value)
        } catch {
          throw new Error(`${name}: not valid JSON`)
        }
      }
      writers[name] = (v) => (control.value = v === undefined ? '' : JSON.stringify(v))
    }
    if (required.has(name)) control.setAttribute('aria-required', 'true')
    el.append(field(label, control, prop.description))
  }
  return {
    el,
    read() {
      const args: Record<string, unknown> = {}
      for (const [name, read] of Object.entries(readers)) {
        const v = read()
        if (v !== undefined) args[name] = v
      }
      return args
    },
    write(args) {
      for (const [name, w] of Object.entries(writers)) w(args[name])
    },
  }
}
