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
    EditorState.phrases.of({ '$ unchanged lines': '$ unchanged lines (click to show)' }),
    support,
    editorTheme,
    schemeColours(),
    collapsedTheme,
  ]
  return new MergeView({
    parent,
    a: { doc: before, extensions: side(`${path} before`) },
    b: { doc: after, extensions: side(`${path} after`) },
    gutter: true,
    highlightChanges: true,
    collapseUnchanged: { margin: 3, minSize: 6 },
  })
}
