import { MergeView } from '@codemirror/merge'
import { EditorState } from '@codemirror/state'
import { EditorView, lineNumbers } from '@codemirror/view'
import { minimalSetup } from 'codemirror'
import { editorTheme, schemeColours } from './editor-theme.ts'
import { languageOf } from './languages.ts'

/** The collapsed stretches without their ⦚ marks (a glyph many fonts lack). */
const collapsedTheme = EditorView.theme({
  '& .cm-collapsedLines::before, & .cm-collapsedLines::after': { content: 'none' },
  '& .cm-collapsedLines': { color: 'var(--muted)', fontStyle: 'italic' },
})

/**
 * The review step: the file before (left) and after (right) the change, side by side, changed
 * lines marked and long unchanged stretches collapsed. Both sides are read only: the change is
 * the editor's; Apply saves it. Loaded on the first review (with `@codemirror/merge`).
 */
export async function mergeReview(
  parent: HTMLElement,
  path: string,
  before: string,
  after: string,
): Promise<{ destroy(): void }> {
  const lang = languageOf(path)
  const support = lang ? await lang.load() : []
  const side = (label: string) => [
    minimalSetup,
    lineNumbers(),
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
    EditorView.contentAttributes.of({ 'aria-label': label, tabindex: '0' }),
    // Wrapped, so a change at the end of a long line shows in a narrow column.
    EditorView.lineWrapping,
    EditorState.phrases.of({ '$ unchanged lines': '$ unchanged lines (click or Enter to show)' }),
    support,
    editorTheme,
    schemeColours(),
    collapsedTheme,
  ]
  const view = new MergeView({
    parent,
    a: { doc: before, extensions: side(`${path} before`) },
    b: { doc: after, extensions: side(`${path} after`) },
    gutter: true,
    highlightChanges: true,
    collapseUnchanged: { margin: 3, minSize: 6 },
  })
  const keyboard = collapsedLinesByKeyboard(parent)
  return {
    destroy() {
      keyboard.disconnect()
      view.destroy()
    },
  }
}

const COLLAPSED = '.cm-collapsedLines'

/**
 * `@codemirror/merge` opens a collapsed stretch of unchanged lines on a click only: make each
 * one a focusable button (Tab reaches it after its side's text) that Enter or Space opens, the
 * focus then back on that side's text.
 */
function collapsedLinesByKeyboard(parent: HTMLElement): { disconnect(): void } {
  const mark = () => {
    for (const el of parent.querySelectorAll<HTMLElement>(`${COLLAPSED}:not([tabindex])`)) {
      el.tabIndex = 0
      el.setAttribute('role', 'button')
    }
  }
  const onKey = (e: KeyboardEvent) => {
    const target = e.target as HTMLElement
    if (!target.matches?.(COLLAPSED) || (e.key !== 'Enter' && e.key !== ' ')) return
    e.preventDefault()
    const content = target.closest('.cm-editor')?.querySelector<HTMLElement>('.cm-content')
    target.click()
    content?.focus()
  }
  const observer = new MutationObserver(mark)
  observer.observe(parent, { childList: true, subtree: true })
  parent.addEventListener('keydown', onKey)
  mark()
  return {
    disconnect() {
      observer.disconnect()
      parent.removeEventListener('keydown', onKey)
    },
  }
}
