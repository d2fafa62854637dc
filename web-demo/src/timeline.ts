import type { SessionEvent, ToolResult } from '../../adapters/browser/index.ts'
import { h } from './dom.ts'

const MAX_ENTRIES = 200
const MAX_DELTA_CHARS = 4000

interface Evidence {
  original_bytes: number
  projected_bytes: number
  loss_mode?: string
  /** `inline:sha256:…` when nothing was cut, else the `a3s://tool-output/…` full original. */
  content_ref?: string
  transform_algorithm?: string
}

/** Opens the full original of a cut result (the artifact named by the evidence). */
export type ArtifactOpener = (uri: string, toolName: string) => void

/** The evidence line of a result: bytes kept of the original, loss mode, the artifact. */
function evidenceView(
  e: Evidence,
  toolName: string,
  open: ArtifactOpener | undefined,
): HTMLElement {
  const saved = e.original_bytes - e.projected_bytes
  const cut = saved > 0 || (e.loss_mode !== undefined && e.loss_mode !== 'none')
  const artifact = e.content_ref?.startsWith('a3s://') ? e.content_ref : undefined
  const kept = e.original_bytes > 0 ? Math.round((e.projected_bytes / e.original_bytes) * 100) : 100
  return h(
    'div',
    {
      class: `evidence${cut ? ' cut' : ''}`,
      'data-saved': saved,
      'data-loss-mode': e.loss_mode ?? 'none',
      title: e.transform_algorithm,
    },
    `projection: ${e.original_bytes} B → ${e.projected_bytes} B` +
      (cut ? `, ${saved} B saved (${e.loss_mode}; ${kept}% kept)` : ', nothing cut'),
    artifact
      ? h(
          'button',
          {
            type: 'button',
            class: 'artifact-link',
            'data-uri': artifact,
            title: artifact,
            onclick: () => open?.(artifact, toolName),
          },
          'open the full original',
        )
      : null,
  )
}

/**
 * The live timeline of session events: one entry per call (start, streamed output, end with its
 * duration and outcome), denials and confirmations, and the projection evidence of each result
 * (bytes before and after projection, the loss mode, and a button opening the full original of a
 * cut result).
 */
export function timeline(): {
  el: HTMLElement
  add(event: SessionEvent): void
  evidence(result: ToolResult): void
  /** What the evidence's "open the full original" does. */
  onArtifact(open: ArtifactOpener): void
  clear(): void
} {
  const list = h('ol', { id: 'timeline', class: 'timeline', 'aria-label': 'Session events' })
  const calls = new Map<string, HTMLElement>()
  // A call's end (event) and its result (reply) arrive in either order: each waits for the other.
  const awaitingEvidence: HTMLElement[] = []
  const earlyResults: ToolResult[] = []

  let openArtifact: ArtifactOpener | undefined
  const attach = (el: HTMLElement, result: ToolResult) => {
    const e = result.metadata?.a3s_tool_result_evidence as Evidence | undefined
    if (!e) return
    el.append(evidenceView(e, result.name, (uri, tool) => openArtifact?.(uri, tool)))
  }

  const entry = (callId: string, toolName: string, at: number): HTMLElement => {
    let el = calls.get(callId)
    if (el) return el
    el = h(
      'li',
      { class: 'call running', 'data-call-id': callId, 'data-tool': toolName },
      h(
        'div',
        { class: 'call-head' },
        h('time', {}, new Date(at).toLocaleTimeString()),
        ' ',
        h('strong', {}, toolName),
        h('span', { class: 'call-state' }, ' running'),
      ),
    )
    calls.set(callId, el)
    list.prepend(el)
    while (list.children.length > MAX_ENTRIES) {
      const last = list.lastElementChild as HTMLElement
      calls.delete(last.dataset.callId ?? '')
      last.remove()
    }
    return el
  }

  const line = (el: HTMLElement, cls: string, text: string) =>
    el.append(h('div', { class: cls }, text))

  return {
    el: h('div', { class: 'timeline-wrap' }, list),
    add(event) {
      if (event.type === 'events_dropped') {
        list.prepend(h('li', { class: 'note' }, `${event.count} events dropped`))
        return
      }
      if (event.type === 'tool_state') return
      if (
        event.type === 'skill_loaded' ||
        event.type === 'skill_started' ||
        event.type === 'skill_finished'
      ) {
        list.prepend(
          h(
            'li',
            { class: 'note', 'data-skill': event.skill },
            `${event.type.replace('_', ' ')}: ${event.skill}`,
          ),
        )
        return
      }
      if (
        event.type === 'workflow_step_started' ||
        event.type === 'workflow_step_completed' ||
        event.type === 'workflow_step_failed'
      ) {
        list.prepend(
          h(
            'li',
            { class: 'note', 'data-workflow-step': event.step_id },
            `${event.type.replace(/_/g, ' ')}: ${event.run_id} / ${event.step_id}`,
          ),
        )
        return
      }
      const el = entry(event.callId, event.toolName, event.timestamp)
      if (event.parentCallId) el.dataset.parent = event.parentCallId
      switch (event.type) {
        case 'tool_start': {
          const args = JSON.stringify(event.args)
          line(el, 'args', args.length > 200 ? `${args.slice(0, 200)}…` : args)
          break
        }
        case 'tool_output_delta': {
          let out = el.querySelector<HTMLElement>('.delta')
          if (!out) {
            out = h('pre', { class: 'delta' })
            el.append(out)
          }
          if ((out.textContent ?? '').length < MAX_DELTA_CHARS) out.textContent += event.delta
          break
        }
        case 'tool_end': {
          el.classList.remove('running')
          el.classList.add(event.exitCode === 0 ? 'ok' : 'failed')
          el.dataset.state = event.state
          el.querySelector('.call-state')!.textContent =
            ` ${event.state} in ${event.durationMs} ms` +
            (event.exitCode === 0 ? '' : ` (${event.errorKind?.type ?? 'error'})`) +
            `, ${event.outputBytes} B`
          if (!event.parentCallId) {
            const early = earlyResults.findIndex((r) => r.name === event.toolName)
            if (early >= 0) attach(el, earlyResults.splice(early, 1)[0]!)
            else awaitingEvidence.push(el)
          }
          break
        }
        case 'confirmation_required':
          line(el, 'ask', 'waiting for confirmation')
          break
        case 'permission_denied':
          el.classList.add('denied')
          line(el, 'denied', `denied${event.rule ? ` by ${event.rule}` : ''}: ${event.reason}`)
          break
        case 'hook_denied':
        case 'hook_error':
        case 'budget_exhausted':
          line(el, 'denied', `${event.type}: ${'reason' in event ? event.reason : event.message}`)
          break
      }
    },
    evidence(result) {
      const at = awaitingEvidence.findIndex((el) => el.dataset.tool === result.name)
      if (at >= 0) attach(awaitingEvidence.splice(at, 1)[0]!, result)
      else {
        earlyResults.push(result)
        if (earlyResults.length > 50) earlyResults.shift()
      }
    },
    onArtifact(open) {
      openArtifact = open
    },
    clear() {
      list.replaceChildren()
      calls.clear()
      awaitingEvidence.length = 0
      earlyResults.length = 0
    },
  }
}
