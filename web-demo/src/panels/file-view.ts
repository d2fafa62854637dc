import type { ToolResult } from '../../../adapters/browser/index.ts'
import { diffView, field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import type { CodeEditor } from '../editor/code-editor.ts'

const LINE = /^ *(\d+)\t(.*)$/
const MAX_LINE = 2000

interface ReadRange {
  returned_lines?: number
  next_offset?: number | null
  eof?: boolean
}

/** The whole text of a file through `read` (page after page), or the failed result. */
async function readAll(
  ctx: DemoContext,
  path: string,
): Promise<{ text: string; clipped: boolean } | ToolResult> {
  const lines: string[] = []
  let offset = 0
  let clipped = false
  for (let page = 0; page < 50; page++) {
    const result = await ctx.client.call('read', { file_path: path, offset, limit: 2000 })
    if (result.exitCode !== 0) return result
    const range = (result.metadata?.range ?? {}) as ReadRange
    const got = result.output.split('\n').slice(0, range.returned_lines ?? 0)
    for (const raw of got) {
      const m = LINE.exec(raw)
      const line = m ? m[2]! : raw
      if (line.length >= MAX_LINE) clipped = true
      lines.push(line)
    }
    if (range.eof !== false || range.next_offset == null) break
    offset = range.next_offset
  }
  return { text: lines.join('\n'), clipped }
}

/**
 * File view with edit: read into a CodeMirror editor (loaded with the first file, its language
 * on demand), change, review the change side by side (`edit` dry run, then a merge view), apply
 * (`edit`, or `write` for a new or empty file) and see the diff applied.
 */
export function fileViewPanel(): Panel & {
  open(path: string, line?: number): void
  /** Open `path` unless a file was opened or created already (the first file shown). */
  openFirst(path: string): void
} {
  let ctx!: DemoContext
  let original = ''
  let current: string | undefined
  let merge: { destroy(): void } | undefined
  const pathInput = h('input', {
    id: 'open-path',
    type: 'text',
    placeholder: 'src/slugify.ts',
    autocomplete: 'off',
    spellcheck: 'false',
  })
  const host = h('div', { id: 'editor', class: 'editor-host' })
  const hint = h(
    'p',
    { id: 'file-hint', class: 'empty-hint' },
    'Pick a file in the tree (README.md is a good start), open a search hit, or type a path and ' +
      'Open. To make a file, type its path and press New file.',
  )
  const heading = h('h2', { id: 'file-title' }, 'No file open')
  const status = h('div', { id: 'file-status', 'aria-live': 'polite' })
  const before = h('div', { id: 'diff-before' })
  const after = h('div', { id: 'diff-after' })
  const reviewButton = h('button', { id: 'review', type: 'button' }, 'Review changes')
  const applyButton = h('button', { id: 'apply', type: 'button', disabled: true }, 'Apply')

  const show = (...nodes: (Node | string)[]) => replace(status, ...nodes)
  let editorPromise: Promise<CodeEditor> | undefined
  /** The editor, created on first use: CodeMirror is not part of the page's first load. */
  const editor = () =>
    (editorPromise ??= import('../editor/code-editor.ts').then(({ createCodeEditor }) => {
      hint.remove()
      return createCodeEditor(host, { onSave: () => reviewButton.click() })
    }))
  const clearReview = () => {
    merge?.destroy()
    merge = undefined
    replace(before)
    replace(after)
    applyButton.disabled = true
  }

  /** Counts opens and new files: a read that ends after a later one started is dropped. */
  let generation = 0
  const open = async (path: string, line?: number): Promise<void> => {
    const mine = ++generation
    pathInput.value = path
    clearReview()
    show(`Reading ${path}…`)
    const [read, ed] = await Promise.all([readAll(ctx, path), editor()])
    if (mine !== generation) return
    heading.textContent = path
    if ('exitCode' in read) {
      current = undefined
      void ed.load('', path, { readOnly: true })
      show(resultView(read))
      return
    }
    current = path
    original = read.text
    const language = ed.load(read.text, path, { readOnly: read.clipped })
    if (line !== undefined) ed.goToLine(line)
    show(read.clipped ? `A line is over ${MAX_LINE} characters: shown cut, read only.` : '')
    await language
  }

  /** The change as tool arguments: `edit` of the whole old text, or `write` of a new/empty file. */
  const change = (
    text: string,
    dryRun: boolean,
  ): { tool: string; args: Record<string, unknown> } => {
    const path = current ?? pathInput.value.trim()
    if (current === undefined || original === '')
      return { tool: 'write', args: { file_path: path, content: text } }
    return {
      tool: 'edit',
      args: {
        file_path: path,
        old_string: original,
        new_string: text,
        expected_replacements: 1,
        ...(dryRun ? { dry_run: true } : {}),
      },
    }
  }

  const diffOf = (r: ToolResult) => (r.metadata?.diff as string | undefined) ?? ''

  /** Review: the dry run must pass, then before and after side by side. */
  const review = async () => {
    clearReview()
    const text = (await editor()).text()
    if (text === original && current !== undefined) return show('No changes to review.')
    const { tool, args } = change(text, true)
    const path = String(args.file_path)
    let diff: string | undefined
    if (tool === 'edit') {
      const result = await ctx.client.call(tool, args)
      if (result.exitCode !== 0) return show(resultView(result))
      diff = diffOf(result)
    }
    const mergeHost = h('div', { class: 'merge-host', id: 'merge-view' })
    replace(
      before,
      h(
        'h3',
        {},
        tool === 'edit'
          ? `Review ${path}: before (left) and after (right); the dry run passed`
          : `Review ${path}: new content (${text.length} characters), written with write`,
      ),
      mergeHost,
      diff
        ? h('details', {}, h('summary', {}, 'The dry run’s unified diff'), diffView(diff))
        : null,
    )
    show('Loading the merge view…')
    merge = await mergeReview(mergeHost, path, tool === 'edit' ? original : '', text)
    applyButton.disabled = false
    before.scrollIntoView({ block: 'nearest' })
    show('Apply saves this change.')
  }

  const apply = async () => {
    const text = (await editor()).text()
    const { tool, args } = change(text, false)
    applyButton.disabled = true
    const result = await ctx.client.call(tool, args)
    if (result.exitCode !== 0) return show(resultView(result))
    const diff = diffOf(result)
    replace(after, h('h3', {}, 'Applied'), diff ? diffView(diff) : resultView(result))
    current = String(args.file_path)
    original = text
    heading.textContent = current
    show(`Saved ${current}.`)
    ctx.refreshTree()
  }

  reviewButton.addEventListener('click', () => void review())
  applyButton.addEventListener('click', () => void apply())

  const newFile = async () => {
    const path = pathInput.value.trim()
    if (!path) return show('Type the new file’s path first.')
    const mine = ++generation
    clearReview()
    const ed = await editor()
    if (mine !== generation) return
    current = undefined
    original = ''
    void ed.load('', path)
    heading.textContent = `${path} (new)`
    show('Write the content, then Review changes and Apply.')
    ed.focus()
  }

  const form = h(
    'form',
    {
      class: 'row wrap',
      onsubmit: (e: Event) => {
        e.preventDefault()
        if (pathInput.value.trim()) void open(pathInput.value.trim())
      },
    },
    field('Path', pathInput),
    h('button', { type: 'submit', id: 'open' }, 'Open'),
    h('button', { type: 'button', id: 'new-file', onclick: () => void newFile() }, 'New file'),
  )

  return {
    id: 'file',
    title: 'File',
    open: (path, line) => void open(path, line),
    openFirst: (path) => {
      if (generation === 0) void open(path)
    },
    render(c) {
      ctx = c
      return h(
        'section',
        { class: 'panel-body' },
        heading,
        form,
        hint,
        host,
        h('div', { class: 'row' }, reviewButton, applyButton),
        status,
        before,
        after,
      )
    },
  }
}

/** The merge view's module, fetched on the first review. */
async function mergeReview(
  ...args: Parameters<typeof import('../editor/merge-review.ts').mergeReview>
): Promise<{ destroy(): void }> {
  const { mergeReview: show } = await import('../editor/merge-review.ts')
  return show(...args)
}
