import { h, replace } from '../dom.ts'
import { resultView, type DemoContext } from '../context.ts'

interface LsEntry {
  name: string
  kind: string
  size?: number
}

/** What the tree tells its owner. */
export interface FileTreeOptions {
  /** The root's first page arrived: the names in it (to open README.md, say). */
  onRootLoaded?(names: string[]): void
  /** What an empty workspace tells the user to do. */
  emptyHint?: string
}

/** The file tree: `ls` page by page (a "more" button follows `next_cursor`), folders lazily. */
export function fileTree(
  ctx: DemoContext,
  options: FileTreeOptions = {},
): { el: HTMLElement; refresh(): void } {
  const root = h('ul', { class: 'tree', role: 'tree', 'aria-label': 'Workspace files' })
  const status = h('div', { class: 'tree-status', 'aria-live': 'polite' })

  const loadInto = async (list: HTMLElement, dir: string, cursor?: string): Promise<void> => {
    const result = await ctx.client.call('ls', {
      path: dir === '' ? '.' : dir,
      limit: 100,
      ...(cursor ? { cursor } : {}),
    })
    if (result.exitCode !== 0) {
      list.append(h('li', {}, resultView(result)))
      return
    }
    const meta = result.metadata as { entries?: LsEntry[]; next_cursor?: string | null }
    const entries = meta.entries ?? []
    for (const entry of entries) list.append(item(dir, entry))
    if (dir === '' && cursor === undefined) {
      if (entries.length === 0)
        list.append(
          h(
            'li',
            { role: 'none', class: 'empty-hint', id: 'tree-empty' },
            options.emptyHint ?? 'This workspace is empty: create a file in the File panel.',
          ),
        )
      options.onRootLoaded?.(entries.map((e) => e.name))
    }
    if (meta.next_cursor) {
      const more: HTMLButtonElement = h(
        'button',
        {
          class: 'tree-more',
          onclick: () => {
            more.parentElement!.remove()
            void loadInto(list, dir, meta.next_cursor!)
          },
        },
        'more…',
      )
      list.append(h('li', { role: 'none' }, more))
    }
  }

  const item = (dir: string, entry: LsEntry): HTMLElement => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`
    if (entry.kind === 'directory') {
      const children = h('ul', { role: 'group', hidden: true })
      let loaded = false
      const toggle: HTMLButtonElement = h(
        'button',
        {
          class: 'tree-dir',
          role: 'treeitem',
          'aria-expanded': 'false',
          'data-path': path,
          onclick: () => {
            const open = toggle.getAttribute('aria-expanded') !== 'true'
            toggle.setAttribute('aria-expanded', String(open))
            children.hidden = !open
            if (open && !loaded) {
              loaded = true
              void loadInto(children, path)
            }
          },
        },
        `${entry.name}/`,
      )
      return h('li', { role: 'none' }, toggle, children)
    }
    return h(
      'li',
      { role: 'none' },
      h(
        'button',
        {
          class: 'tree-file',
          role: 'treeitem',
          'data-path': path,
          title: entry.size !== undefined ? `${entry.size} bytes` : undefined,
          onclick: () => ctx.openFile(path),
        },
        entry.name,
      ),
    )
  }

  // Arrow keys move between visible items; Right/Left open and close folders.
  root.addEventListener('keydown', (event) => {
    const items = [...root.querySelectorAll<HTMLButtonElement>('button')].filter(
      (b) => b.offsetParent !== null,
    )
    const at = items.indexOf(document.activeElement as HTMLButtonElement)
    if (at < 0) return
    const current = items[at]!
    const go = (i: number) => items[Math.max(0, Math.min(items.length - 1, i))]?.focus()
    if (event.key === 'ArrowDown') go(at + 1)
    else if (event.key === 'ArrowUp') go(at - 1)
    else if (event.key === 'Home') go(0)
    else if (event.key === 'End') go(items.length - 1)
    else if (event.key === 'ArrowRight' && current.getAttribute('aria-expanded') === 'false')
      current.click()
    else if (event.key === 'ArrowLeft' && current.getAttribute('aria-expanded') === 'true')
      current.click()
    else return
    event.preventDefault()
  })

  const refresh = () => {
    replace(root)
    status.textContent = ''
    void loadInto(root, '')
  }
  refresh()
  return { el: h('div', { class: 'tree-wrap' }, status, root), refresh }
}
