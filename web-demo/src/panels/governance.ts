import type { PermissionRules } from '../../../adapters/browser/index.ts'
import { errorType, resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'
import { sessionState } from './session-state.ts'

/** A call to try: a tool and its arguments. */
export interface ExampleCall {
  tool: string
  args: Record<string, unknown>
}

const RULE = /^([A-Za-z_*][A-Za-z0-9_*-]*)(?:\((.+)\))?$/s
const TEXT_TOOLS: Record<string, string> = {
  bash: 'command',
  web_fetch: 'url',
  download: 'url',
}

/**
 * A value the glob of a rule matches: `**` and a `*` after a space, `/` or at the start become a
 * harmless file name, other `*` nothing, `?` one letter, `{a,b}` its first choice.
 */
export function exampleOfGlob(glob: string): string {
  return glob
    .replace(/\{([^,}]*)[^}]*\}/g, '$1')
    .replace(/\*\*\/?/g, (m, at: number, all: string) =>
      m.endsWith('/') || at + m.length < all.length ? '' : 'demo-note.txt',
    )
    .replace(/(^|[\s/])\*/g, '$1demo-note.txt')
    .replace(/\*/g, '')
    .replace(/\?/g, 'x')
}

/**
 * A call a rule decides, to try it: `write(private/**)` → write `private/demo-note.txt`,
 * `bash(rm *)` → `rm demo-note.txt`. Undefined for a rule naming a tool the session lacks or
 * every tool (`*`, `mcp__x__*`).
 */
export function exampleCall(rule: string, tools: ReadonlySet<string>): ExampleCall | undefined {
  const m = RULE.exec(rule.trim())
  if (!m || m[1]!.includes('*') || !tools.has(m[1]!)) return undefined
  const tool = m[1]!
  const value = m[2] === undefined ? undefined : exampleOfGlob(m[2])
  const textKey = TEXT_TOOLS[tool]
  if (textKey) return { tool, args: { [textKey]: value ?? 'echo governed' } }
  const path = value ?? 'README.md'
  if (tool === 'write')
    return { tool, args: { file_path: path, content: 'written by the governance panel\n' } }
  if (tool === 'ls' || tool === 'search')
    return tool === 'ls' ? { tool, args: { path } } : { tool, args: { mode: 'glob', query: path } }
  return { tool, args: { file_path: path } }
}

const LISTS = ['deny', 'ask', 'allow'] as const
const MEANING = {
  deny: 'refused, with a typed permission_denied result',
  ask: 'waits for a human: the confirmation dialog',
  allow: 'runs without asking',
} as const

/** The rule lists, each rule with a "Try" button when an example call can be made for it. */
function rulesView(
  rules: PermissionRules,
  tools: ReadonlySet<string>,
  pick: (call: ExampleCall) => void,
): HTMLElement {
  const lists = LISTS.map((kind) => {
    const items = (rules[kind] ?? []).map((rule) => {
      const call = exampleCall(rule, tools)
      return h(
        'li',
        { 'data-rule': rule, 'data-decision': kind },
        h('code', {}, rule),
        ' ',
        call
          ? h(
              'button',
              {
                type: 'button',
                class: 'gov-try',
                'data-rule': rule,
                onclick: () => pick(call),
              },
              `Try ${call.tool}`,
            )
          : null,
      )
    })
    return h(
      'div',
      { class: `gov-list ${kind}` },
      h('h4', {}, `${kind}: ${MEANING[kind]}`),
      items.length ? h('ul', {}, ...items) : h('p', { class: 'empty' }, `no ${kind} rule`),
    )
  })
  return h(
    'div',
    { id: 'gov-rules' },
    ...lists,
    h(
      'p',
      {},
      `No rule matches: ${rules.defaultDecision ?? 'allow'}. deny wins over ask over allow.`,
    ),
  )
}

/** What a result means for governance: refused by a rule, refused in the dialog, or ran. */
function verdictOf(ctx: DemoContext, kind: string | undefined, output: string): HTMLElement {
  if (kind === 'permission_denied')
    return note('info', 'Refused by governance (errorKind permission_denied): ', output)
  if (kind) return note('info', `The call ran and failed with ${kind}.`)
  return note(
    'info',
    'The call was allowed and ran.',
    ctx.client.mode === 'tab' ? '' : ' (on the server)',
  )
}

/**
 * The governance panel: the session's permission rules (deny, ask, allow) and a way to try a
 * call against them on the governed path. A denied call shows its typed refusal; an `ask` call
 * raises the confirmation dialog and runs once approved, or is refused.
 */
export function governancePanel(): Panel {
  return {
    id: 'governance',
    title: 'Governance',
    render(ctx: DemoContext) {
      const tools = new Set(ctx.tools.map((t) => t.name))
      const rulesHost = h('div', {}, 'Reading the rules…')
      const tool = h(
        'select',
        { id: 'gov-tool' },
        ...ctx.tools.map((t) => h('option', { value: t.name }, t.name)),
      )
      ctx.onToolsChanged(() => {
        const picked = tool.value
        replace(tool, ...ctx.tools.map((t) => h('option', { value: t.name }, t.name)))
        tool.value = picked
      })
      const args = h('textarea', { id: 'gov-args', rows: 4, spellcheck: 'false' })
      args.value = '{}'
      const out = h('div', { id: 'gov-result', 'aria-live': 'polite' })
      const { el, status } = capabilityLayout({
        id: 'gov',
        title: 'Governance',
        intro:
          'Every call from a model, the console or these panels takes the governed path: the ' +
          "session's permission rules decide it before the tool runs. Pick a rule's Try, or " +
          'write a call, and run it.',
        body: [
          block('Rules of this session', rulesHost),
          block(
            'Try a call',
            field('Tool', tool),
            field('Arguments (JSON)', args),
            h(
              'button',
              { type: 'button', id: 'gov-run', onclick: () => void run() },
              'Run governed call',
            ),
            out,
          ),
        ],
      })
      const pick = (call: ExampleCall) => {
        tool.value = call.tool
        args.value = JSON.stringify(call.args, null, 2)
        replace(out)
        args.focus()
      }
      const run = async () => {
        let parsed: Record<string, unknown>
        try {
          parsed = JSON.parse(args.value) as Record<string, unknown>
        } catch (error) {
          return replace(
            out,
            note('missing', `Arguments are not JSON: ${(error as Error).message}`),
          )
        }
        replace(out, note('info', `Running ${tool.value}… (an ask rule opens the dialog)`))
        const result = await ctx.client.call(tool.value, parsed)
        const kind = errorType(result)
        out.dataset.errorKind = kind ?? ''
        replace(out, verdictOf(ctx, kind, result.output), resultView(result))
        if (result.exitCode === 0) ctx.refreshTree()
      }
      void sessionState(ctx.client)
        .permissions()
        .then((answer) => {
          if (!answer.ok) {
            say(
              status,
              note('missing', `Could not read the rules: ${answer.code}: ${answer.message}`),
            )
            return replace(rulesHost)
          }
          replace(rulesHost, rulesView(answer.value, tools, pick))
          const rules = answer.value
          if (!rules.deny?.length && !rules.ask?.length)
            say(
              status,
              note(
                'hint',
                'This session has no deny or ask rule. Start the server with --deny RULE or ' +
                  "--ask RULE (e.g. --deny 'write(secrets/**)') to see governance at work.",
              ),
            )
        })
      return el
    },
  }
}
