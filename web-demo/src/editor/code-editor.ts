import { bracketMatching, indentOnInput } from '@codemirror/language'
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search'
import { Compartment, EditorState, StateEffect, StateField } from '@codemirror/state'
import {
  Decoration,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
  type DecorationSet,
} from '@codemirror/view'
import { minimalSetup } from 'codemirror'
import { editorTheme, schemeColours } from './editor-theme.ts'
import { languageOf } from './languages.ts'

/** The editor of the file panel: CodeMirror 6 with the file's language loaded on demand. */
export interface CodeEditor {
  /** The editor's element (`.cm-editor`). */
  readonly dom: HTMLElement
  /** The text as edited. */
  text(): string
  /**
   * Show `text` as the content of `path` (undoing starts afresh). Its language, when the
   * extension has one, is fetched and applied when it arrives; the promise settles then.
   */
  load(text: string, path: string, options?: { readOnly?: boolean }): Promise<void>
  /** Select (1-based) `line`, scroll it to the middle and mark it until the next load. */
  goToLine(line: number): void
  focus(): void
}

const markLine = StateEffect.define<number | null>()
const hitLine = Decoration.line({ class: 'cm-hit-line' })

/** The line a search hit opened: a line decoration, cleared by `markLine.of(null)`. */
const markedLine = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const effect of tr.effects)
      if (effect.is(markLine))
        return effect.value === null
          ? Decoration.none
          : Decoration.set([hitLine.range(tr.state.doc.line(effect.value).from)])
    return marks.map(tr.changes)
  },
  provide: (field) => EditorView.decorations.from(field),
})

/**
 * A CodeMirror editor in `host`: line numbers, the active line, bracket matching, undo, search
 * in the file (Ctrl/Cmd-F; Ctrl/Cmd-G next), and Ctrl/Cmd-S calling `onSave`.
 */
export function createCodeEditor(
  host: HTMLElement,
  options: { onSave?(): void; label?: string } = {},
): CodeEditor {
  const language = new Compartment()
  let loads = 0
  const extensions = (locked = false) => [
    minimalSetup,
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightActiveLine(),
    bracketMatching(),
    indentOnInput(),
    highlightSelectionMatches(),
    search({ top: true }),
    keymap.of([
      ...searchKeymap,
      { key: 'Mod-s', preventDefault: true, run: () => (options.onSave?.(), true) },
    ]),
    markedLine,
    language.of([]),
    EditorState.readOnly.of(locked),
    EditorView.contentAttributes.of({ 'aria-label': options.label ?? 'File content' }),
    editorTheme,
    schemeColours(),
  ]
  const view = new EditorView({
    parent: host,
    state: EditorState.create({ extensions: extensions() }),
  })

  return {
    dom: view.dom,
    text: () => view.state.doc.toString(),
    async load(text, path, { readOnly: locked = false } = {}) {
      const load = ++loads
      view.setState(EditorState.create({ doc: text, extensions: extensions(locked) }))
      host.dataset.path = path
      delete host.dataset.line
      const lang = languageOf(path)
      host.dataset.language = lang ? `${lang.name} (loading)` : 'text'
      if (!lang) return
      const support = await lang.load()
      if (load !== loads) return
      view.dispatch({ effects: language.reconfigure(support) })
      host.dataset.language = lang.name
    },
    goToLine(line) {
      const n = Math.max(1, Math.min(line, view.state.doc.lines))
      const at = view.state.doc.line(n)
      view.dispatch({
        selection: { anchor: at.from, head: at.to },
        effects: [markLine.of(n), EditorView.scrollIntoView(at.from, { y: 'center' })],
      })
      host.dataset.line = String(n)
      view.focus()
    },
    focus: () => view.focus(),
  }
}
