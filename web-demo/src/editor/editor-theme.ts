import { EditorView } from '@codemirror/view'

/** The editor in the demo's colours (the CSS variables of styles.css), light and dark alike. */
export const editorTheme = EditorView.theme({
  '&': {
    backgroundColor: 'var(--panel)',
    color: 'var(--fg)',
    border: '1px solid var(--line)',
    borderRadius: '6px',
    fontSize: '13px',
  },
  '&.cm-focused': { outline: '3px solid var(--accent)', outlineOffset: '2px' },
  '.cm-scroller': { fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, monospace" },
  '.cm-gutters': {
    backgroundColor: 'var(--bg)',
    color: 'var(--muted)',
    borderRight: '1px solid var(--line)',
  },
  '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '.cm-hit-line': { backgroundColor: 'var(--hit-line)' },
  '.cm-panels': { backgroundColor: 'var(--bg)', color: 'var(--fg)' },
  '.cm-panels input, .cm-panels button, .cm-panels label': { fontSize: '13px' },
})
