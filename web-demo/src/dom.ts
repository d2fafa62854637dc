type Child = Node | string | number | false | null | undefined
type Attrs = Record<string, string | number | boolean | EventListener | undefined>

/** `h('button', { class: 'x', onclick }, 'Text')`: an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (key.startsWith('on') && typeof value === 'function')
      el.addEventListener(key.slice(2), value)
    else if (key === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value)
    else if (key === 'checked' && 'checked' in el) (el as HTMLInputElement).checked = Boolean(value)
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  append(el, ...children)
  return el
}

/** Append children (strings become text nodes; falsy ones are skipped). */
export function append(el: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Replace every child of `el`. */
export function replace(el: Node, ...children: Child[]): void {
  while (el.firstChild) el.removeChild(el.firstChild)
  append(el, ...children)
}

let ids = 0
/** A fresh id for label/field pairs. */
export const uid = (prefix: string): string => `${prefix}-${++ids}`

/** A labelled field: `<label>` + the control, in a wrapper. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  control.id ||= uid('f')
  return h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label),
    control,
    hint ? h('small', {}, hint) : null,
  )
}

/** A `<pre>` showing a unified diff, lines coloured by their first character. */
export function diffView(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff', tabindex: 0 })
  for (const line of diff.split('\n')) {
    const kind = line.startsWith('+++') || line.startsWith('---') ? 'file' : line[0]
    const cls =
      kind === '+'
        ? 'add'
        : kind === '-'
          ? 'del'
          : kind === '@'
            ? 'hunk'
            : kind === 'file'
              ? 'file'
              : ''
    append(pre, h('span', { class: cls }, line), '\n')
  }
  return pre
}
