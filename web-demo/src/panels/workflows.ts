import type { SessionEvent } from '../../../adapters/browser/index.ts'
import { resultView, type DemoContext, type Panel } from '../context.ts'
import { field, h, replace } from '../dom.ts'
import { block, capabilityLayout, note, say } from './capability-layout.ts'

/** A small workflow: three steps fanned out (each counts files of one kind), then a summary. */
export const EXAMPLE_WORKFLOW = `// Called with inputs.kind 'workflow' (return one command) or 'step' (return the step's output).
export default async function run(ctx, inputs) {
  if (inputs.kind === 'step') {
    const files = await ctx.glob(inputs.input.pattern)
    return { pattern: inputs.input.pattern, files: files.length }
  }
  const done = inputs.step_outputs
  if (!done.md) {
    return {
      type: 'schedule_steps',
      steps: [
        { step_id: 'md', step_name: 'count', input: { pattern: '**/*.md' } },
        { step_id: 'js', step_name: 'count', input: { pattern: '**/*.{js,ts}' } },
        { step_id: 'json', step_name: 'count', input: { pattern: '**/*.json' } },
      ],
    }
  }
  return { type: 'complete', output: { md: done.md, js: done.js, json: done.json } }
}
`

interface StepRow {
  step_id: string
  step_name: string
  status: string
  attempts: number
}

type StepEvent = Extract<SessionEvent, { type: `workflow_step_${string}` }>

const isStepEvent = (e: SessionEvent): e is StepEvent => e.type.startsWith('workflow_step_')

/** The live step list: one row a step, its state and how long it ran. */
function liveSteps(): { el: HTMLElement; on(e: StepEvent): void } {
  const el = h('ol', { id: 'workflow-steps', class: 'workflow-steps', 'aria-label': 'Steps' })
  const started = new Map<string, number>()
  const row = (id: string) => {
    let li = el.querySelector<HTMLElement>(`li[data-step="${CSS.escape(id)}"]`)
    if (!li) {
      li = h('li', { 'data-step': id }, h('strong', {}, id), h('span', { class: 'step-state' }))
      el.append(li)
    }
    return li
  }
  return {
    el,
    on(e) {
      const li = row(e.step_id)
      const state = li.querySelector('.step-state')!
      li.dataset.state = e.type.replace('workflow_step_', '')
      if (e.type === 'workflow_step_started') {
        started.set(e.step_id, e.timestamp)
        state.textContent = ` running (attempt ${e.attempt})`
        return
      }
      const ms = e.timestamp - (started.get(e.step_id) ?? e.timestamp)
      state.textContent =
        e.type === 'workflow_step_completed'
          ? ` completed in ${ms} ms`
          : ` failed (attempt ${e.attempt}): ${e.error}`
    },
  }
}

/**
 * Workflows: run a small `dynamic_workflow` (a journaled, replayed orchestration) and watch
 * its steps start and finish; the result lists each step's state and attempts. The journal is
 * `.a3s/workflow/<run_id>.jsonl` in the workspace, so running the same run id again replays it
 * without re-running a completed step.
 */
export function workflowsPanel(): Panel {
  return {
    id: 'workflows',
    title: 'Workflows',
    render(ctx: DemoContext) {
      const source = h('textarea', { id: 'workflow-source', rows: 12, spellcheck: 'false' })
      source.value = EXAMPLE_WORKFLOW
      const runId = h('input', { id: 'workflow-run-id', type: 'text' })
      runId.value = `demo-${Date.now().toString(36)}`
      const out = h('div', { id: 'workflow-result', 'aria-live': 'polite' })
      const { el, status } = capabilityLayout({
        id: 'workflow',
        title: 'Workflows',
        intro:
          'dynamic_workflow runs a script as a journaled workflow: each step is recorded once, ' +
          'and a run driven again after a crash never re-runs a completed step.',
        body: ctx.has('dynamic_workflow')
          ? [
              block(
                'Run',
                field('Workflow script', source),
                field('Run id', runId, 'The same id, script and input resumes (replays) the run.'),
                h(
                  'button',
                  { type: 'button', id: 'workflow-run', onclick: () => void run() },
                  'Run workflow',
                ),
              ),
              out,
            ]
          : [],
      })
      if (!ctx.has('dynamic_workflow')) {
        say(
          status,
          note(
            'missing',
            'This session does not offer dynamic_workflow: the host enables it with the session ' +
              'option workflows: {} (the tab does; isoagent serve with --workflows, as npm start).',
          ),
        )
        return el
      }
      const run = async () => {
        const id = runId.value.trim()
        const steps = liveSteps()
        replace(out, block('Steps', steps.el), note('info', 'Running…'))
        const stop = ctx.client.onEvent((e) => {
          if (isStepEvent(e) && e.run_id === id) steps.on(e)
        })
        const result = await ctx.client
          .call('dynamic_workflow', {
            source: source.value,
            ...(id ? { run_id: id } : {}),
          })
          .finally(stop)
        const meta = result.metadata?.dynamic_workflow as
          { run_id: string; status: string; last_sequence: number; steps: StepRow[] } | undefined
        replace(
          out,
          block('Steps', steps.el),
          meta
            ? h(
                'div',
                { id: 'workflow-summary', 'data-status': meta.status },
                note(
                  'info',
                  `Run ${meta.run_id}: ${meta.status}, ${meta.last_sequence} journal events.`,
                ),
                h(
                  'table',
                  { class: 'workflow-table' },
                  h(
                    'tr',
                    {},
                    h('th', {}, 'step'),
                    h('th', {}, 'name'),
                    h('th', {}, 'state'),
                    h('th', {}, 'attempts'),
                  ),
                  ...meta.steps.map((s) =>
                    h(
                      'tr',
                      { 'data-step': s.step_id },
                      h('td', {}, s.step_id),
                      h('td', {}, s.step_name),
                      h('td', {}, s.status),
                      h('td', {}, String(s.attempts)),
                    ),
                  ),
                ),
              )
            : null,
          resultView(result),
        )
        ctx.refreshTree()
      }
      return el
    },
  }
}
