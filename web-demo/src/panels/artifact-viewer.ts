import { h, replace } from '../dom.ts'
import type { ToolClient } from '../tool-client.ts'
import { sessionState } from './session-state.ts'

const MAX_SHOWN_CHARS = 400_000

/**
 * A dialog showing the full original of a cut result: the artifact the projection evidence
 * names (`a3s://tool-output/<tool>/<sha256>`), read from the session (tab) or from
 * `GET /v1/sessions/:id/artifacts?uri=` (server). Text is shown; other bytes are offered as a
 * download.
 */
export function artifactViewer(): {
  el: HTMLDialogElement
  attach(client: ToolClient): void
  open(uri: string, toolName: string): Promise<void>
} {
  let client: ToolClient | undefined
  const title = h('h2', { id: 'artifact-title' }, 'Full original')
  const body = h('div', { id: 'artifact-body' })
  const close = h('button', { type: 'button', id: 'artifact-close' }, 'Close')
  const dialog = h(
    'dialog',
    { id: 'artifact-dialog', 'aria-labelledby': 'artifact-title' },
    title,
    body,
    h('div', { class: 'row' }, close),
  )
  close.addEventListener('click', () => dialog.close())
  const show = (...children: (Node | string)[]) => {
    replace(body, ...children)
    if (!dialog.open) dialog.showModal()
    close.focus()
  }
  return {
    el: dialog,
    attach(c) {
      client = c
      if (dialog.open) dialog.close()
    },
    async open(uri, toolName) {
      if (!client) return
      title.textContent = `Full original of a ${toolName} result`
      show(h('p', {}, `Reading ${uri}…`))
      const answer = await sessionState(client).artifact(uri)
      if (!answer.ok)
        return show(h('p', { class: 'failed', role: 'alert' }, `${answer.code}: ${answer.message}`))
      const bytes = answer.value
      let text: string | undefined
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
      } catch {
        text = undefined
      }
      const meta = h(
        'p',
        { class: 'artifact-meta', 'data-bytes': bytes.length },
        h('code', {}, uri),
        ` · ${bytes.length} B`,
      )
      if (text === undefined) {
        const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>]))
        return show(meta, h('a', { href: url, download: 'artifact.bin' }, 'Download the bytes'))
      }
      const shown = text.length > MAX_SHOWN_CHARS ? text.slice(0, MAX_SHOWN_CHARS) : text
      show(
        meta,
        h('pre', { class: 'output artifact-text', id: 'artifact-text', tabindex: 0 }, shown),
        text.length > MAX_SHOWN_CHARS
          ? h('p', {}, `(first ${MAX_SHOWN_CHARS} characters shown)`)
          : '',
      )
    },
  }
}
