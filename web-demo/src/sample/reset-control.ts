import { h } from '../dom.ts'

/**
 * The header's "Reset sample" button and its dialog: confirming puts the sample project back
 * (every file of the tab's workspace removed, `.git` too, then the sample written); Cancel or
 * Escape closes the dialog and changes nothing.
 */
export function resetControl(reset: () => Promise<void>): HTMLElement {
  const confirm = h('button', { type: 'button', id: 'reset-confirm' }, 'Reset')
  const cancel = h('button', { type: 'button', id: 'reset-cancel' }, 'Cancel')
  const dialog = h(
    'dialog',
    { id: 'reset-dialog', 'aria-labelledby': 'reset-title' },
    h('h2', { id: 'reset-title' }, 'Reset the sample project?'),
    h(
      'p',
      {},
      'Every file of this tab’s workspace is removed (its .git too) and the sample project is ' +
        'written again: one commit of README.md, src/slugify.ts and test/slugify.check.ts.',
    ),
    h('div', { class: 'row' }, confirm, cancel),
  )
  const button = h(
    'button',
    { type: 'button', id: 'reset-sample', onclick: () => dialog.showModal() },
    'Reset sample',
  )
  cancel.addEventListener('click', () => dialog.close())
  confirm.addEventListener('click', async () => {
    confirm.disabled = true
    try {
      await reset()
    } finally {
      confirm.disabled = false
      dialog.close()
      button.focus()
    }
  })
  dialog.addEventListener('close', () => button.focus())
  return h('span', { class: 'reset-control' }, button, dialog)
}
