import { h, replace } from './dom.ts'
import type { PendingConfirmation, ToolClient } from './tool-client.ts'

/**
 * The confirmations dialog: a call a permission rule asks about waits here until it is
 * approved (the call runs) or refused (it fails with `permission_denied`). Several queue up.
 */
export function confirmations(): {
  el: HTMLDialogElement
  attach(client: ToolClient): void
  ask(p: PendingConfirmation): void
} {
  let client: ToolClient | undefined
  const queue: PendingConfirmation[] = []
  const seen = new Set<string>()
  const body = h('div', {})
  const approve = h('button', { type: 'button', id: 'confirm-approve' }, 'Approve')
  const refuse = h('button', { type: 'button', id: 'confirm-refuse' }, 'Refuse')
  const dialog = h(
    'dialog',
    { id: 'confirm-dialog', 'aria-labelledby': 'confirm-title' },
    h('h2', { id: 'confirm-title' }, 'Allow this call?'),
    body,
    h('div', { class: 'row' }, approve, refuse),
  )
  const showNext = () => {
    const next = queue[0]
    if (!next) {
      if (dialog.open) dialog.close()
      return
    }
    replace(
      body,
      h('p', {}, 'A permission rule asks before ', h('strong', {}, next.toolName), ' runs with:'),
      h('pre', { class: 'output' }, JSON.stringify(next.args, null, 2)),
      queue.length > 1 ? h('p', {}, `${queue.length - 1} more waiting`) : null,
    )
    if (!dialog.open) dialog.showModal()
    approve.focus()
  }
  const answer = async (approved: boolean) => {
    const current = queue.shift()
    showNext()
    if (current && client) await client.confirm(current.id, approved).catch(() => undefined)
  }
  approve.addEventListener('click', () => void answer(true))
  refuse.addEventListener('click', () => void answer(false))
  // Escape refuses (the call must not wait for ever behind a closed dialog).
  dialog.addEventListener('cancel', (e) => {
    e.preventDefault()
    void answer(false)
  })
  return {
    el: dialog,
    attach(c) {
      client = c
      queue.length = 0
      seen.clear()
      showNext()
      void c.pendingConfirmations().then((list) => list.forEach((p) => this.ask(p)))
    },
    ask(p) {
      if (seen.has(p.id)) return
      seen.add(p.id)
      queue.push(p)
      showNext()
    },
  }
}
