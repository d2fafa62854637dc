import type { ToolResult } from '../../../adapters/browser/index.ts'
import { diffView, field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'

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

/** File view with edit: read, change, review the diff (`edit` dry run), apply, see the diff. */
export function fileViewPanel(): Panel & { open(path: string, line?: number): void } {
  let ctx!: DemoContext
  let original = ''
  let current: string | undefined
  const pathInput = h('input', {
    id: 'open-path',
    type: 'text',
    placeholder: 'src/main.ts',
    autocomplete: 'off',
    spellcheck: 'false',
  })
  const editor = h('textarea', {
    id: 'editor',
    spellcheck: 'false',
    'aria-label': 'File content',
    rows: 18,
  })
  const heading = h('h2', { id: 'file-title' }, 'No file open')
  const status = h('div', { id: 'file-status', 'aria-live': 'polite' })
  const before = h('div', { id: 'diff-before' })
  const after = h('div', { id: 'diff-after' })
  const reviewButton = h('button', { id: 'review', type: 'button' }, 'Review changes')
  const applyButton = h('button', { id: 'apply', type: 'button', disabled: true }, 'Apply')

  const show = (...nodes: (Node | string)[]) => replace(status, ...nodes)

  const open = async (path: string, line?: number): Promise<void> => {
    pathInput.value = path
    replace(before)
    replace(after)
    applyButton.disabled = true
    show(`Reading ${path}…`)
    const read = await readAll(ctx, path)
    if ('exitCode' in read) {
      current = undefined
      heading.textContent = path
      editor.value = ''
      show(resultView(read))
      return
    }
    current = path
    original = read.text
    heading.textContent = path
    editor.value = read.text
    editor.readOnly = read.clipped
    show(read.clipped ? `A line is over ${MAX_LINE} characters: shown cut, read only.` : '')
    if (line !== undefined) goToLine(line)
  }

  const goToLine = (line: number) => {
    const lines = editor.value.split('\n')
    const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0)
    const end = start + (lines[line - 1]?.length ?? 0)
    editor.focus()
    editor.setSelectionRange(start, end)
    const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 18
    editor.scrollTop = Math.max(0, (line - 3) * lineHeight)
    editor.dataset.line = String(line)
  }

  /** The change as tool arguments: `edit` of the whole old text, or `write` of a new/empty file. */
  const change = (dryRun: boolean): { tool: string; args: Record<string, unknown> } => {
    const path = current ?? pathInput.value.trim()
    if (current === undefined || original === '')
      return { tool: 'write', args: { file_path: path, content: editor.value } }
    return {
      tool: 'edit',
      args: {
        file_path: path,
        old_string: original,
        new_string: editor.value,
        expected_replacements: 1,
        ...(dryRun ? { dry_run: true } : {}),
      },
    }
  }

  const diffOf = (r: ToolResult) => (r.metadata?.diff as string | undefined) ?? ''

  reviewButton.addEventListener('click', async () => {
    replace(after)
    if (editor.value === original && current !== undefined) {
      show('No changes to review.')
      return
    }
    const { tool, args } = change(true)
    if (tool === 'write') {
      replace(
        before,
        h(
          'p',
          {},
          `New content for ${String(args.file_path)} (${editor.value.length} characters).`,
        ),
      )
      applyButton.disabled = false
      show('')
      return
    }
    const result = await ctx.client.call(tool, args)
    if (result.exitCode !== 0) return show(resultView(result))
    replace(before, h('h3', {}, 'Diff before applying (dry run)'), diffView(diffOf(result)))
    applyButton.disabled = false
    show('')
  })

  applyButton.addEventListener('click', async () => {
    const { tool, args } = change(false)
    applyButton.disabled = true
    const result = await ctx.client.call(tool, args)
    if (result.exitCode !== 0) return show(resultView(result))
    const diff = diffOf(result)
    replace(after, h('h3', {}, 'Applied'), diff ? diffView(diff) : resultView(result))
    current = String(args.file_path)
    original = editor.value
    heading.textContent = current
    show(`Saved ${current}.`)
    ctx.refreshTree()
  })

  const form = h(
    'form',
    {
      class: 'row',
      onsubmit: (e: Event) => {
        e.preventDefault()
        if (pathInput.value.trim()) void open(pathInput.value.trim())
      },
    },
    field('Path', pathInput),
    h('button', { type: 'submit', id: 'open' }, 'Open'),
    h(
      'button',
      {
        type: 'button',
        id: 'new-file',
        onclick: () => {
          const path = pathInput.value.trim()
          if (!path) return show('Type the new file’s path first.')
          current = undefined
          original = ''
          editor.readOnly = false
          editor.value = ''
          heading.textContent = `${path} (new)`
          replace(before)
          replace(after)
          show('Write the content, then Review changes and Apply.')
          editor.focus()
        },
      },
      'New file',
    ),
  )

  return {
    id: 'file',
    title: 'File',
    open: (path, line) => void open(path, line),
    render(c) {
      ctx = c
      return h(
        'section',
        { class: 'panel-body' },
        heading,
        form,
        editor,
        h('div', { class: 'row' }, reviewButton, applyButton),
        status,
        before,
        after,
      )
    },
  }
}
