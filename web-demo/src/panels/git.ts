import { diffView, field, h, replace } from '../dom.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'

/** Git: init, status, add, commit, log and diff through the `git` tool. */
export function gitPanel(): Panel {
  return {
    id: 'git',
    title: 'Git',
    render(ctx: DemoContext) {
      const out = h('div', {
        id: 'git-output',
        'aria-live': 'polite',
        'data-empty-hint':
          'Try status, log or diff: the sample project is a repository with one commit. Edit a file, then diff, add and commit.',
      })
      if (!ctx.has('git'))
        return h(
          'section',
          { class: 'panel-body' },
          h('h2', {}, 'Git'),
          h('p', {}, 'This workspace has no git tool.'),
        )
      const path = h('input', { id: 'git-path', type: 'text', placeholder: 'all files' })
      const message = h('input', { id: 'git-message', type: 'text', placeholder: 'what changed' })
      const run = async (args: Record<string, unknown>) => {
        replace(out, `git ${String(args.command)}…`)
        const result = await ctx.client.call('git', args)
        if (result.exitCode === 0 && args.command === 'diff' && result.output.trim())
          replace(out, resultView(result, { output: false }), diffView(result.output))
        else replace(out, resultView(result))
        if (['init', 'checkout', 'stash'].includes(String(args.command))) ctx.refreshTree()
      }
      const button = (command: string, extra: () => Record<string, unknown> = () => ({})) =>
        h(
          'button',
          {
            type: 'button',
            id: `git-${command}`,
            onclick: () => void run({ command, ...extra() }),
          },
          command,
        )
      const withPath = () => (path.value.trim() ? { path: path.value.trim() } : {})
      return h(
        'section',
        { class: 'panel-body' },
        h('h2', {}, 'Git'),
        h(
          'div',
          { class: 'row wrap' },
          button('init'),
          button('status'),
          button('log', () => ({ limit: 20 })),
          button('branch'),
        ),
        h(
          'div',
          { class: 'row wrap' },
          field('Path (add, diff)', path),
          button('add', withPath),
          button('diff', withPath),
        ),
        h(
          'form',
          {
            class: 'row wrap',
            onsubmit: (e: Event) => {
              e.preventDefault()
              void run({ command: 'commit', message: message.value || 'update from the web demo' })
            },
          },
          field('Commit message', message),
          h('button', { type: 'submit', id: 'git-commit' }, 'commit'),
        ),
        out,
      )
    },
  }
}
