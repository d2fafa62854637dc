import { HighlightStyle, syntaxHighlighting } from '@codemirror/language'
import type { Extension } from '@codemirror/state'
import { EditorView } from '@codemirror/view'
// CodeMirror's own tag set (a dependency of @codemirror/language).
import { tags as t } from '@lezer/highlight'

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

/** Token colours readable on the dark background (the default style is made for light ones). */
const darkColours = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.moduleKeyword, t.operatorKeyword], color: '#c792ea' },
  { tag: [t.string, t.special(t.string)], color: '#c3e88d' },
  { tag: [t.number, t.bool, t.atom, t.null], color: '#f78c6c' },
  { tag: [t.regexp, t.escape], color: '#f07178' },
  { tag: t.comment, color: '#8b949e', fontStyle: 'italic' },
  { tag: [t.definition(t.variableName), t.function(t.variableName)], color: '#82aaff' },
  { tag: [t.typeName, t.className, t.namespace], color: '#ffcb6b' },
  { tag: [t.propertyName, t.attributeName], color: '#89ddff' },
  { tag: t.heading, color: '#82aaff', fontWeight: 'bold' },
  { tag: [t.link, t.url], color: '#89ddff', textDecoration: 'underline' },
  { tag: t.emphasis, fontStyle: 'italic' },
  { tag: t.strong, fontWeight: 'bold' },
  { tag: t.invalid, color: '#ff8a80' },
])

/**
 * The syntax colours for the page's colour scheme when the editor is made: in a dark scheme,
 * `darkColours` over the default style; in a light one, the default style alone.
 */
export function schemeColours(): Extension {
  return matchMedia('(prefers-color-scheme: dark)').matches ? syntaxHighlighting(darkColours) : []
}
