import { h, replace } from '../dom.ts'

type Child = Node | string | null | undefined | false

/**
 * How a note reads: information, a hint what to do next (or good news), a warning (a mismatch),
 * or a capability that is missing.
 */
export type NoteKind = 'info' | 'hint' | 'warn' | 'missing'

/**
 * The one layout of the capability panels (governance, projection, tab vs server, skills,
 * retrieval, MCP, workflows): a heading, a line saying what the panel shows, a status line that
 * screen readers announce, then the panel's own parts.
 */
export function capabilityLayout(options: {
  id: string
  title: string
  intro: string
  body: Child[]
}): { el: HTMLElement; status: HTMLElement } {
  const status = h('div', {
    id: `${options.id}-status`,
    class: 'cap-status',
    'aria-live': 'polite',
  })
  const el = h(
    'section',
    { class: 'panel-body capability', 'data-capability': options.id },
    h('h2', {}, options.title),
    h('p', { class: 'cap-intro' }, options.intro),
    status,
    ...options.body,
  )
  return { el, status }
}

/** A note in a capability panel (`data-note` carries its kind, for tests and styles). */
export function note(kind: NoteKind, ...children: Child[]): HTMLElement {
  return h('p', { class: `cap-note ${kind}`, 'data-note': kind }, ...children)
}

/** Show `children` in a status line (replacing what it said). */
export function say(status: HTMLElement, ...children: Child[]): void {
  replace(status, ...children)
}

/** A titled block inside a capability panel. */
export function block(title: string, ...children: Child[]): HTMLElement {
  return h('div', { class: 'cap-block' }, h('h3', {}, title), ...children)
}

/** Pretty JSON in a focusable `<pre>`. */
export function jsonView(value: unknown, id?: string): HTMLElement {
  return h('pre', { class: 'output', tabindex: 0, id }, JSON.stringify(value, null, 2))
}
